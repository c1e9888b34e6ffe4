package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"cronvisor/internal/base/run"
	"cronvisor/internal/daemon"
)

func newRun(g *globals) *cobra.Command {
	var conflictCode int
	cmd := &cobra.Command{
		Use:   "run NAME",
		Short: "Run one job now, under its lock and deadline, in the foreground",
		Long: `Run one job now, under its lock and its deadline, in the foreground; its
output passes through. Usable from a legacy crontab line:

  * * * * * cronvisor --config /etc/cronvisor/jobs.yaml run sync_orders

Exit status: the job's own; 124 when it hit its timeout; 0 with a one-line
reason on stderr when skipped because the lock is held (see
--conflict-exit-code); 125 when cronvisor itself failed (lock error); 126/127
when the command could not be started; 128+N when interrupted by signal N.`,
		Args: argsExactly(1, "one job name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runOnce(g, args[0], conflictCode)
		},
	}
	cmd.Flags().IntVar(&conflictCode, "conflict-exit-code", 0, "exit code when skipped because the lock is held")
	return cmd
}

func runOnce(g *globals, name string, conflictCode int) error {
	cfg, err := loadConfig(g)
	if err != nil {
		return err
	}
	job, ok := findJob(cfg, name)
	if !ok {
		return noJob(g, cfg, name)
	}
	log := slog.New(slog.NewTextHandler(g.stderr, nil))
	env, err := daemon.Open(cfg, daemon.Options{ConfigPath: g.configPath, Log: log}, job.Lock)
	if err != nil {
		return exitCode(125, err)
	}
	defer env.Close()
	_ = env.RecoverRuns(context.Background())

	var outMu sync.Mutex
	env.Listen(func(ev run.Event) {
		switch e := ev.(type) {
		case run.Output:
			outMu.Lock()
			defer outMu.Unlock()
			w := g.stdout
			if e.Stream == "stderr" {
				w = g.stderr
			}
			fmt.Fprintln(w, e.Line)
		case run.Skip:
			fmt.Fprintf(g.stderr, "cronvisor: %s: skipped: %s\n", e.Job, e.Reason)
		case run.End:
			if e.Outcome != run.OK && e.Outcome != run.Failed && e.Outcome != run.Skipped {
				fmt.Fprintf(g.stderr, "cronvisor: %s: %s: %s\n", e.Job, e.Outcome, e.Reason)
			}
		}
	})

	// A signal to `cronvisor run` ends the job like a timeout (the whole
	// tree, with kill_grace), records it, and exits 128+signal.
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	stop := onSignal(sigs, func(s os.Signal) {
		env.Supervisor.Kill(job.Name, fmt.Errorf("interrupted by %v", s))
	})
	f := env.Supervisor.Fire(ctx, job, time.Now(), true)
	signal.Stop(sigs)
	return runExit(f, stop(), conflictCode)
}

// onSignal calls kill with the first signal from sigs, in a goroutine that
// the returned stop ends and waits for; stop returns that signal, nil if
// none came. Only after stop is the signal safe to read.
func onSignal(sigs <-chan os.Signal, kill func(os.Signal)) (stop func() os.Signal) {
	done := make(chan struct{})
	var got os.Signal
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case s := <-sigs:
			got = s
			kill(s)
		case <-done:
		}
	})
	return func() os.Signal {
		close(done)
		wg.Wait()
		return got
	}
}

// runExit maps a finished fire to the contract's exit codes.
func runExit(f run.End, sig os.Signal, conflictCode int) error {
	switch f.Outcome {
	case run.OK:
		return nil
	case run.Failed:
		if f.ExitCode != nil {
			return exitCode(*f.ExitCode, nil)
		}
		return exitCode(1, nil)
	case run.Timeout:
		return exitCode(124, nil)
	case run.Skipped:
		if conflictCode == 0 {
			return nil
		}
		return exitCode(conflictCode, nil)
	case run.Interrupted, run.Replaced:
		if s, ok := sig.(syscall.Signal); ok {
			return exitCode(128+int(s), nil)
		}
		return exitCode(130, nil)
	case run.Error:
		// Like timeout(1): 127 command not found, 126 other start
		// failures (proc sets those), 125 cronvisor's own failure.
		if f.Class == run.ClassStartFailed && f.ExitCode != nil {
			return exitCode(*f.ExitCode, nil)
		}
		return exitCode(125, nil)
	}
	return exitCode(1, fmt.Errorf("unexpected outcome %q", f.Outcome))
}
