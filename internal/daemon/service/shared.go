package service

import (
	"context"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/store/history"
)

// SharedHistory is the history every host of a fleet shares (a
// *fleet.Store, history_backend: postgres): what the history queries and
// the jobs' last outcome and start read while it answers.
type SharedHistory interface {
	Query(ctx context.Context, f history.Filter) ([]run.Record, error)
	Summaries(ctx context.Context, jobs []string) (map[string]history.Summary, error)
}

// sharedWait bounds a read of the shared history: past it, this host's
// own store answers instead.
const sharedWait = 2 * time.Second

// SharedDown is JobStatus.History while the shared history cannot be
// read and this host's own records are shown instead.
const SharedDown = "the shared history (history_backend) is unreachable; showing this host's records"

// WithShared reads history queries and the jobs' last outcome and start
// from the fleet's shared history, falling back to this host's store
// while it does not answer.
func WithShared(shared SharedHistory) Option { return func(s *Service) { s.shared = shared } }

// sharedRecent reads every job's summary from the shared history; ok is
// false when it did not answer.
func (s *Service) sharedRecent(ctx context.Context, jobs []string) (StoredRuns, bool) {
	if s.shared == nil {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, sharedWait)
	defer cancel()
	sums, err := s.shared.Summaries(ctx, jobs)
	return sums, err == nil
}

// fleetRecent is a job's Recent from this host's view, with the last
// outcome and start of the whole fleet where another host's are newer.
type fleetRecent struct {
	local  RecentRuns
	shared StoredRuns
}

func (f fleetRecent) Recent(job string) Recent {
	r := f.local.Recent(job)
	sh, ok := f.shared[job]
	if !ok {
		return r
	}
	if sh.EndedAt.After(r.Ended) && r.Outcome != run.Running {
		r.Outcome, r.Ended = sh.Outcome, sh.EndedAt
	}
	if sh.StartedAt.After(r.Started) {
		r.Started = sh.StartedAt
	}
	return r
}
