package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
)

// daemonSocket is the control socket of --config's state dir. A file that
// does not validate still names its state dir (see config.LoadForReading):
// an operator fixing it must still reach the daemon, which runs the last
// good one. An unreadable file leaves the default state dir beside it.
func daemonSocket(g *globals) string {
	if cfg, _ := config.LoadForReading(g.configPath); cfg != nil {
		return statedir.Dir(cfg.StateDir).Socket()
	}
	base, _ := filepath.Abs(filepath.Dir(g.configPath))
	return statedir.Dir(filepath.Join(base, config.DefaultStateDir)).Socket()
}

// errNoDaemon is the operator verbs' answer when nothing serves the socket.
func errNoDaemon(g *globals, path string) error {
	return exitCode(1, fmt.Errorf("no cronvisor daemon is running for %s (nothing listens on %s); start one with `cronvisor daemon`", g.configPath, path))
}

// connectDaemon connects to the daemon of --config: exit 1 with a clear
// message when none runs.
func connectDaemon(g *globals) (*ctl.Client, error) {
	path := daemonSocket(g)
	c, err := ctl.Dial(path)
	if errors.Is(err, ctl.ErrNoDaemon) {
		return nil, errNoDaemon(g, path)
	}
	if err != nil {
		return nil, exitCode(1, err)
	}
	return c, nil
}

// daemonJobNames lists the jobs the daemon runs (its jobs.yaml may be
// older than the file on disk).
func daemonJobNames(ctx context.Context, c *ctl.Client) ([]string, error) {
	jobs, err := c.Jobs(ctx)
	if err != nil {
		return nil, exitCode(1, err)
	}
	names := make([]string, len(jobs))
	for i, j := range jobs {
		names[i] = j.Name
	}
	return names, nil
}

// checkDaemonJobs is a usage error for the first name the daemon does not
// run, with the nearest names it does; nothing is done before the check,
// so a typo in a list changes no job.
func checkDaemonJobs(ctx context.Context, c *ctl.Client, names []string) error {
	known, err := daemonJobNames(ctx, c)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, n := range known {
		have[n] = true
	}
	for _, n := range names {
		if have[n] {
			continue
		}
		if near := config.Nearest(n, known, 3); len(near) > 0 {
			return usageError("the daemon runs no job %q; did you mean %s?", n, orList(near))
		}
		return usageError("the daemon runs no job %q (cronvisor status lists its jobs)", n)
	}
	return nil
}

// verbError turns a daemon's answer into the command's error: an unknown
// job (removed by a reload meanwhile) is a usage error, the rest exit 1.
func verbError(err error) error {
	if errors.Is(err, ctl.ErrUnknownJob) {
		return exitCode(2, err)
	}
	if errors.Is(err, ctl.ErrNoDaemon) {
		return exitCode(1, fmt.Errorf("the daemon went away: %w", err))
	}
	return exitCode(1, err)
}
