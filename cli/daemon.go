package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"cronvisor/runner"
)

func newDaemon(g *globals) *cobra.Command {
	var logFormat string
	cmd := &cobra.Command{
		Use:   "daemon",
		Short: "Schedule and run jobs headless, with structured logs on stderr",
		Long: `Schedule and run the jobs of jobs.yaml headless. Logs go to stderr as
structured records (text on a terminal, JSON otherwise; --log-format).

SIGTERM/SIGINT: stop scheduling, let running jobs finish up to shutdown_grace,
then end them like a timeout; exit 0. SIGHUP: reload jobs.yaml (an invalid
file keeps the old jobs and logs every problem).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDaemon(g, logFormat)
		},
	}
	cmd.Flags().StringVar(&logFormat, "log-format", "auto", "log format: auto, text or json")
	return cmd
}

func newLogger(g *globals, format string) (*slog.Logger, error) {
	switch format {
	case "auto":
		format = "json"
		if f, ok := g.stderr.(*os.File); ok && isTerminal(f) {
			format = "text"
		}
	case "text", "json":
	default:
		return nil, usageError("--log-format %q: want auto, text or json", format)
	}
	if format == "text" {
		return slog.New(slog.NewTextHandler(g.stderr, nil)), nil
	}
	return slog.New(slog.NewJSONHandler(g.stderr, nil)), nil
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func runDaemon(g *globals, logFormat string) error {
	log, err := newLogger(g, logFormat)
	if err != nil {
		return err
	}
	resumeGC := pauseGC()
	cfg, err := loadConfig(g)
	if err != nil {
		resumeGC()
		return err
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	p, err := startProcess(g, log, cfg) // its FreeOSMemory is the start-up's one collection
	resumeGC()
	if err != nil {
		return exitCode(1, err)
	}
	p.serve(sigs, nil, false)
	p.shutdown()
	return nil
}

// logEvents writes one record per run start, end and skip, each with job
// and run_id. Output lines take their own path (outlog): rate-capped, and
// never waited for by the run.
func logEvents(log *slog.Logger) func(runner.Event) {
	return func(ev runner.Event) {
		switch e := ev.(type) {
		case runner.RunStarted:
			log.Info("run started", "job", e.Job, "run_id", e.RunID, "slot", e.Slot.Format(time.RFC3339Nano), "pid", e.PID, "manual", e.Manual)
		case runner.RunOutput: // see outlog
		case runner.RunFinished:
			attrs := []any{"job", e.Job, "run_id", e.RunID, "outcome", string(e.Outcome), "slot", e.Slot.Format(time.RFC3339Nano)}
			if e.ExitCode != nil {
				attrs = append(attrs, "exit_code", *e.ExitCode)
			}
			if !e.Started.IsZero() {
				attrs = append(attrs, "duration", e.Ended.Sub(e.Started).String())
			}
			if e.Reason != "" {
				attrs = append(attrs, "reason", e.Reason)
			}
			level := slog.LevelInfo
			if e.Outcome != runner.OutcomeOK {
				level = slog.LevelWarn
			}
			log.Log(context.Background(), level, "run finished", attrs...)
		case runner.RunSkipped:
			attrs := []any{"job", e.Job, "run_id", e.RunID, "slot", e.Slot.Format(time.RFC3339Nano), "reason", e.Reason}
			if e.Holder != nil {
				attrs = append(attrs, "holder_pid", e.Holder.PID, "holder_host", e.Holder.Host, "holder_run_id", e.Holder.RunID)
			}
			log.Warn("run skipped", attrs...)
		case runner.ConfigReloaded:
			log.Info("config reloaded", "jobs", e.Jobs)
		case runner.ScheduleStalled:
			log.Error("no next fire: the job is not scheduled until one is found", "job", e.Job,
				"after", e.After.Format(time.RFC3339Nano), "retry", e.Retry.Format(time.RFC3339Nano))
		default:
			log.Debug(fmt.Sprintf("event %T", ev))
		}
	}
}
