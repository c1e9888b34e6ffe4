package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/daemon"
	"cronvisor/ui"
)

// errConsoleQuit ends the runs of an embedded scheduler whose console the
// operator quit (after confirming); errHangUp those whose terminal closed
// (SIGHUP), which is the same decision taken by closing the window.
var (
	errConsoleQuit = errors.New("console quit by operator")
	errHangUp      = errors.New("console's terminal closed (SIGHUP)")
)

// runConsole is `cronvisor` without a command: attach to the daemon that
// serves the state dir's socket, else run the scheduler in-process with the
// console on top. Without a terminal it runs headless, like daemon.
func runConsole(_ *cobra.Command, g *globals) error {
	if f, ok := g.stdout.(*os.File); !ok || !isTerminal(f) {
		return runDaemon(g, "auto", "stdout is not a terminal; running headless like `cronvisor daemon`")
	}
	// Attaching only looks: it needs neither the secrets nor a file that
	// validates. Scheduling in-process acts, and needs both.
	if seen, _ := config.LoadForReading(g.configPath); seen != nil {
		client, err := dialDaemon(statedir.Dir(seen.StateDir).Socket())
		if err == nil {
			defer client.Close()
			cfg, _, err := readConfig(g)
			if err != nil {
				return err
			}
			return attach(client, cfg, g)
		}
		if !errors.Is(err, ctl.ErrNoDaemon) {
			// A daemon that refused us, or a socket we refuse: scheduling
			// beside it in-process would be the wrong answer to either.
			return exitCode(1, err)
		}
	}
	cfg, err := loadConfig(g)
	if err != nil {
		return err
	}
	return runEmbedded(g, cfg)
}

// dialDaemon connects to the daemon serving path and checks that it
// answers: Dial only connects, and a stale socket or another uid's daemon
// shows up at the first call.
func dialDaemon(path string) (*ctl.Client, error) {
	client, err := ctl.Dial(path)
	if err != nil {
		return nil, err
	}
	if _, err := client.Jobs(context.Background()); err != nil {
		client.Close()
		return nil, err
	}
	return client, nil
}

// runEmbedded runs the scheduler in this process with the console on top.
// Logs go to STATE_DIR/cronvisor.log, capped at consoleLogCap: the terminal
// belongs to the console. SIGHUP means the terminal closed, not "reload"
// as for a daemon: it quits like a confirmed quit, so that no headless
// scheduler outlives its window (R and edits of jobs.yaml still reload).
func runEmbedded(g *globals, cfg *config.Config) error {
	// Checked before cronvisor.log is opened, not only in daemon.Open:
	// another user's symlink there would have root append to any file.
	if err := statedir.Check(cfg.StateDir); err != nil {
		return exitCode(1, err)
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return exitCode(1, err)
	}
	logPath := statedir.Dir(cfg.StateDir).ConsoleLog()
	logFile, err := openCappedLog(logPath, consoleLogCap)
	if err != nil {
		return exitCode(1, err)
	}
	defer logFile.Close()
	log := slog.New(slog.NewJSONHandler(logFile, nil))

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	d, err := daemon.New(cfg, daemon.Options{ConfigPath: g.configPath, Log: log, HangUpQuits: true})
	if err != nil {
		return exitCode(1, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopRun, quitRun := context.WithCancel(context.Background())
	endedBy := make(chan os.Signal, 1) // the signal that ended the console, nil if the operator quit
	go func() {
		sig := d.Run(stopRun, sigs)
		cancel() // closes the console, if a signal ended Run
		endedBy <- sig
	}()

	uiErr := ui.Run(ctx, d.Service(), ui.Options{Title: "embedded · " + cfg.Path + " · log " + logPath, Embedded: true,
		ReadOnly: readOnly(g, cfg), Prefs: ui.PrefsPath()})
	quitRun()
	switch <-endedBy {
	case syscall.SIGHUP:
		d.Shutdown(errHangUp)
		return nil // the terminal is gone: nobody reads an error
	case syscall.SIGTERM:
		// Stop like a daemon, letting runs finish within the grace.
		d.Shutdown(nil)
	default:
		// The operator quit the console and confirmed: end the runs now.
		d.Shutdown(errConsoleQuit)
	}
	if uiErr != nil {
		return exitCode(1, uiErr)
	}
	return nil
}

// attach shows the console of a running daemon; while the daemon is away,
// it shows what the state dir says.
func attach(client *ctl.Client, cfg *config.Config, g *globals) error {
	offline, err := newStateDirSource(g.configPath, cfg)
	if err != nil {
		return exitCode(1, err)
	}
	defer offline.Close()
	opts := ui.Options{Title: statedir.Dir(cfg.StateDir).Socket(), Offline: offline, ReadOnly: readOnly(g, cfg), Prefs: ui.PrefsPath()}
	if err := ui.Run(context.Background(), client, opts); err != nil {
		return exitCode(1, err)
	}
	return nil
}

func newUI(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Attach the live console to the running daemon",
		Long: `Attach the live console to the daemon serving the state dir's control socket.
Exits 1 with a clear error when no daemon runs (start one with 'cronvisor daemon',
or run 'cronvisor' alone to schedule in-process with the console on top).`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, _, err := readConfig(g)
			if err != nil {
				return err
			}
			path := statedir.Dir(cfg.StateDir).Socket()
			client, err := dialDaemon(path)
			if errors.Is(err, ctl.ErrNoDaemon) {
				return exitCode(1, fmt.Errorf("%w; start one with `cronvisor daemon`", err))
			}
			if err != nil {
				return exitCode(1, err)
			}
			defer client.Close()
			return attach(client, cfg, g)
		},
	}
	addReadOnly(cmd, g)
	return cmd
}

// addReadOnly adds the console's --read-only flag to cmd.
func addReadOnly(cmd *cobra.Command, g *globals) {
	cmd.Flags().BoolVar(&g.readOnly, "read-only", false,
		"a console to look with: no key or : command that changes anything (run, pause, resume, kill, reload)")
}

// readOnly reports whether the console opens read-only: by the flag, or
// by jobs.yaml's console: {read_only: true}, which the flag cannot undo.
func readOnly(g *globals, cfg *config.Config) bool { return g.readOnly || cfg.Console.ReadOnly }
