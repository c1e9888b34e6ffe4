package cli

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"cronvisor/internal/config"
	"cronvisor/internal/daemon"
	"cronvisor/internal/observe/systemd"
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
file keeps the old jobs and logs every problem). SIGUSR2: hand over, for an
upgrade: stop scheduling and exit 0 at once, leaving every running job to its
keeper; the next daemon on the state dir adopts them.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDaemon(g, logFormat, "")
		},
	}
	cmd.Flags().StringVar(&logFormat, "log-format", "auto", "log format: auto, text or json")
	cmd.Flags().StringVar(&g.metricsAddr, "metrics-addr", "", "serve Prometheus /metrics and /healthz on HOST:PORT (overrides metrics.listen)")
	return cmd
}

func newLogger(g *globals, format string) (*slog.Logger, error) {
	f, _ := g.stderr.(*os.File)
	journal := f != nil && systemd.IsJournal(f)
	switch format {
	case "auto":
		format = "json"
		if f != nil && (isTerminal(f) || journal) {
			format = "text"
		}
	case "text", "json":
	default:
		return nil, usageError("--log-format %q: want auto, text or json", format)
	}
	if format == "text" {
		var opts *slog.HandlerOptions
		if journal { // journald stamps each line itself
			opts = &slog.HandlerOptions{ReplaceAttr: dropTime}
		}
		return slog.New(slog.NewTextHandler(g.stderr, opts)), nil
	}
	return slog.New(slog.NewJSONHandler(g.stderr, nil)), nil
}

// dropTime removes a record's own timestamp.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// runDaemon runs the daemon until SIGTERM or SIGINT; note, when not
// empty, is its first record (why it runs headless).
func runDaemon(g *globals, logFormat, note string) error {
	log, err := newLogger(g, logFormat)
	if err != nil {
		return err
	}
	if a := g.metricsAddr; a != "" {
		// The check metrics.listen gets, for the flag that overrides it.
		if err := config.CheckListen(a); err != nil {
			return usageError("--metrics-addr %q is not HOST:PORT (%v)", a, err)
		}
	}
	if note != "" {
		log.Warn(note)
	}
	cfg, err := loadConfig(g)
	if err != nil {
		return err
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, daemon.HandOverSignal)
	defer signal.Stop(sigs)
	d, err := daemon.New(cfg, daemon.Options{ConfigPath: g.configPath, Log: log, MetricsAddr: g.metricsAddr, Notify: systemd.New(log)})
	if err != nil {
		return exitCode(1, err)
	}
	var cause error
	if d.Run(context.Background(), sigs) == daemon.HandOverSignal {
		cause = daemon.ErrHandOver
	}
	d.Shutdown(cause)
	return nil
}
