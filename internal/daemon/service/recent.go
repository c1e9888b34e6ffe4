package service

import (
	"context"
	"time"

	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/store/history"
)

// SummaryReader is what the history store tells of each job's newest
// records (a *history.Store).
type SummaryReader interface {
	Summaries(ctx context.Context, jobs []string) (map[string]history.Summary, error)
}

// StoredRuns is each job's Recent as the history store has it, without
// counts: those are a daemon's, since it started.
type StoredRuns map[string]history.Summary

// ReadRecent reads each of jobs' summary with one query: thousands of
// jobs must not mean thousands of queries. A failed query leaves them
// unknown.
func ReadRecent(ctx context.Context, store SummaryReader, jobs []config.Job) StoredRuns {
	names := make([]string, len(jobs))
	for i, j := range jobs {
		names[i] = j.Name
	}
	r, _ := store.Summaries(ctx, names)
	return r
}

// LastSlots is runner.LastSlotsFunc over what was read: each of jobs'
// last slot before this process started, absent when it has none.
func (r StoredRuns) LastSlots(_ context.Context, jobs []string) (map[string]time.Time, error) {
	out := make(map[string]time.Time, len(jobs))
	for _, job := range jobs {
		if s, ok := r[job]; ok && !s.LastSlot.IsZero() {
			out[job] = s.LastSlot
		}
	}
	return out, nil
}

// Recent implements RecentRuns.
func (r StoredRuns) Recent(job string) Recent {
	s := r[job]
	return Recent{Outcome: s.Outcome, Ended: s.EndedAt, Started: s.StartedAt}
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
