package daemon

import (
	"context"
	"time"

	"cronvisor/internal/base/durations"
	"cronvisor/internal/store/history"
)

// newLearner learns the durations of the jobs' runs from this host's
// store, with the current config's keep_age and warn_fast (see package
// durations).
func (e *Env) newLearner(store *history.Store, now func() time.Time) *durations.Learner {
	lookup := e.jobLookup()
	return durations.NewLearner(durations.LearnerConfig{
		Source:  store,
		Now:     now,
		KeepAge: func() time.Duration { return e.cfg.Load().History.KeepAge },
		Fast: func(job string) durations.FastRule {
			j, ok := lookup(job)
			if !ok {
				return durations.FastRule{}
			}
			return durations.FastRule{Learned: j.WarnFastLearned, Below: j.WarnFast}
		},
	})
}

// learnedDurations are the current jobs' learned figures, for a scrape;
// the first one reads every job's history (one indexed read a job), the
// next ones find them in memory.
func (d *Daemon) learnedDurations() map[string]durations.Stats {
	cfg := d.current.Load()
	names := make([]string, len(cfg.Jobs))
	for i, j := range cfg.Jobs {
		names[i] = j.Name
	}
	ctx, cancel := context.WithTimeout(d.ctx, learnedReadWait)
	defer cancel()
	stats, _ := d.env.Learner.StatsOf(ctx, names) // a store that fails gives the jobs it could read
	return stats
}

// learnedReadWait bounds a scrape's read of the histories.
const learnedReadWait = 5 * time.Second
