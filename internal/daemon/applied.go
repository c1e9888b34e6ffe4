package daemon

import (
	"time"

	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/plan"
)

// summaryWindow is the window of the reload's one-line diff.
const summaryWindow = 24 * time.Hour

// keepApplied writes the text of the jobs.yaml just applied into the
// state dir, for `reload --dry-run` to compare the file with. It is a
// copy for reading, not a record: it is not synced, and a failure is
// logged, never a reason to refuse the file.
func (d *Daemon) keepApplied(cfg *config.Config) {
	if len(cfg.Text) == 0 {
		return
	}
	if err := statedir.WriteFileAtomic(statedir.Dir(cfg.StateDir).Applied(), cfg.Text, 0o600, false); err != nil {
		d.log.Warn("the applied jobs.yaml is not kept; reload --dry-run cannot compare with it", "err", err)
	}
}

// reloadSummary is the one-line diff of a reload: what changes in the
// jobs' fires over the next day.
func (d *Daemon) reloadSummary(old, cfg *config.Config) string {
	return plan.Summary(plan.Diff(old.Jobs, cfg.Jobs, plan.Options{From: d.o.Clock.Now(), Window: summaryWindow}), summaryWindow)
}
