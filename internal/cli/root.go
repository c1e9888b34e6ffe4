// Package cli defines cronvisor's command line: one cobra command per
// contract command. It returns exit codes; only main exits.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Version, when set at build time (-ldflags "-X cronvisor/cli.Version=..."),
// replaces the module version in --version; the rest comes from the
// binary's build information (see versionLine). A variable because -X sets
// only variables; nothing assigns it at run time.
var Version = ""

// ExitError carries the process exit code up to main.
type ExitError struct {
	Code int
	Err  error // nil when the command already said everything it had to
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// exitCode wraps err so that main exits with code; a nil err means the
// command printed its own message.
func exitCode(code int, err error) error { return &ExitError{Code: code, Err: err} }

// usageError is a bad command line: exit 2, as the contract says.
func usageError(format string, a ...any) error {
	return exitCode(2, fmt.Errorf(format, a...))
}

// globals are the flags every command shares.
type globals struct {
	configPath  string
	metricsAddr string // --metrics-addr of daemon: overrides metrics.listen
	readOnly    bool   // --read-only of the console (cronvisor, cronvisor ui)
	stdout      io.Writer
	stderr      io.Writer
}

// Execute runs the command line args and returns the process exit code.
func Execute(args []string, stdout, stderr io.Writer) int {
	g := &globals{stdout: stdout, stderr: stderr}
	root := newRoot(g)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintln(stderr, "cronvisor:", ee.Err)
		}
		return ee.Code
	}
	// Errors cobra raises itself are about the command line.
	fmt.Fprintln(stderr, "cronvisor:", err)
	fmt.Fprintln(stderr, "Run 'cronvisor --help' for usage.")
	return 2
}

func newRoot(g *globals) *cobra.Command {
	var showVersion bool
	root := &cobra.Command{
		Use:   "cronvisor",
		Short: "A job supervisor that replaces cron: no overlapping runs, enforced deadlines, a live console",
		Long: `cronvisor reads jobs.yaml, schedules every job itself, guards each run with a
lock and a max-runtime deadline, and keeps a history of runs and skips.

Without a command it opens the interactive console.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if showVersion {
				fmt.Fprintf(cmd.OutOrStdout(), "cronvisor %s\n", buildVersion())
				return nil
			}
			return runConsole(cmd, g)
		},
	}
	// Not cobra's Version: printing it in this form takes a version
	// template, and text/template's method lookups keep every exported
	// method of every type in the binary (the linker cannot drop any).
	root.Flags().BoolVarP(&showVersion, "version", "v", false, "version for cronvisor")
	addReadOnly(root, g)
	def := os.Getenv("CRONVISOR_CONFIG")
	if def == "" {
		def = "./jobs.yaml"
	}
	root.PersistentFlags().StringVar(&g.configPath, "config", def, "path of jobs.yaml (env CRONVISOR_CONFIG)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return exitCode(2, err)
	})
	root.AddCommand(
		newValidate(g), newNext(g), newRun(g), newDaemon(g),
		newUI(g), newStatus(g), newLocks(g), newHistory(g), newAudit(g), newImport(g),
		newSuggest(g), newPlan(g), newDiff(g),
	)
	root.AddCommand(newPauseResume(g, "pause"), newPauseResume(g, "resume"), newTrigger(g), newKill(g), newReload(g), newLogs(g))
	root.AddCommand(newHelpJobs(), newHeartbeat(g))
	addCompletion(root, g)
	for _, c := range root.Commands() {
		c.SilenceUsage, c.SilenceErrors = true, true
	}
	return root
}

// argsExactly is cobra.ExactArgs with the contract's exit code 2.
func argsExactly(n int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError("expected %s, got %d argument(s)", what, len(args))
		}
		return nil
	}
}

func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError("unexpected argument %q", args[0])
	}
	return nil
}
