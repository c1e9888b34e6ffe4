package cli

import (
	"context"
	"errors"

	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
)

// namedStatus answers `status JOB...` from a running daemon at the cost
// of those jobs, whatever the number of jobs: it reads only the file's
// settings (see config.LoadSettingsForReading: a whole parse of a
// million jobs takes seconds) and asks the daemon for the named jobs
// alone. The file's problem it names is its settings' or, since the
// daemon watches the file and rereads it on every change, the daemon's
// last refused reload. done is false when the whole path must answer:
// no daemon (the state dir is read from the whole file), a daemon that
// predates the named query, or a name the daemon does not know (the
// whole path offers the nearest).
func namedStatus(ctx context.Context, g *globals, names []string, asJSON bool) (done bool, err error) {
	cfg, problems := config.LoadSettingsForReading(g.configPath)
	if cfg == nil {
		return false, nil // the whole path says why it cannot be read
	}
	client, err := ctl.Dial(statedir.Dir(cfg.StateDir).Socket())
	if err != nil {
		return false, nil // the whole path falls back, or says why not
	}
	defer client.Close()
	jobs, err := client.JobsNamed(ctx, names)
	if errors.Is(err, ctl.ErrUnsupported) || err == nil && !allShown(jobs, names) {
		return false, nil
	}
	if err != nil {
		return true, exitCode(1, err)
	}
	d, derr := client.Daemon(ctx)
	if errs := config.Errors(problems); len(errs) > 0 {
		sayRefused(g, errs[0].String(), len(errs))
	} else if derr == nil && len(d.Refused) > 0 {
		sayRefused(g, d.Refused[0], len(d.Refused))
	}
	return true, printStatus(g, jobs, daemonSource(cfg, d, derr), false, asJSON, true)
}

// allShown reports whether every name has its job among jobs.
func allShown(jobs []ctl.JobStatus, names []string) bool {
	have := make(map[string]bool, len(jobs))
	for _, j := range jobs {
		have[j.Name] = true
	}
	for _, n := range names {
		if !have[n] {
			return false
		}
	}
	return true
}
