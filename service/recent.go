package service

import (
	"context"

	"cronvisor/config"
	"cronvisor/ctl"
	"cronvisor/history"
)

// LatestReader is what the history store tells of each job's newest
// records (a *history.Store).
type LatestReader interface {
	// Latest is each job's newest record, LatestRuns its newest run.
	Latest(ctx context.Context, jobs []string) (map[string]history.Record, error)
	LatestRuns(ctx context.Context, jobs []string) (map[string]history.Record, error)
}

// StoredRuns is each job's Recent as the history store has it, without
// counts: those are a daemon's, since it started.
type StoredRuns struct {
	latest, runs map[string]history.Record
}

// ReadRecent reads the newest record and the newest run of each of jobs
// with one query each: thousands of jobs must not mean thousands of
// queries. A query that fails leaves its part unknown.
func ReadRecent(ctx context.Context, store LatestReader, jobs []config.Job) StoredRuns {
	names := make([]string, len(jobs))
	for i, j := range jobs {
		names[i] = j.Name
	}
	var r StoredRuns
	r.latest, _ = store.Latest(ctx, names)
	r.runs, _ = store.LatestRuns(ctx, names)
	return r
}

// Recent implements RecentRuns.
func (r StoredRuns) Recent(job string) Recent {
	l := r.latest[job]
	return Recent{Outcome: l.Outcome, Ended: l.EndedAt, Started: r.runs[job].StartedAt}
}

// PauseFile is the pauses saved in the state dir, as LoadPauses reads
// them.
type PauseFile map[string]ctl.PauseInfo

// Paused implements Pauses.
func (p PauseFile) Paused(job string) (*ctl.PauseInfo, bool) {
	info, ok := p[job]
	if !ok {
		return nil, false
	}
	return &info, true
}
