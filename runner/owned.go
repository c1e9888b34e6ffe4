package runner

import (
	"context"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
)

// Ownership says whether this host fires a job's scheduled slot, in a
// fleet where each job is owned by one live host (*owner.Gate): the
// owner fires at once; another host may wait a few seconds to learn
// whether the owner fired it, and fires it itself only when the owner
// died before its fire.
type Ownership interface {
	// Slot reports whether this host fires job's slot due now; done is
	// called once a fire let through has ended.
	Slot(ctx context.Context, job *config.Job) (fire bool, done func())
}

// WithOwnership gives the job's scheduled fires to their owner: a fire
// this host does not own ends without a lock, a record or an event (the
// owner's record says who ran it). Manual runs and triggers are not
// affected.
func WithOwnership(o Ownership) Option { return func(s *Supervisor) { s.owner = o } }

// owned lets a scheduled fire through only where Ownership says so. A
// fire waiting for the verdict is not among the Starts: it may wait
// seconds, and the history writer gathers a burst of starts by them.
func (s *Supervisor) owned(next runFunc) runFunc {
	return func(ctx context.Context, f *fire) run.End {
		if s.owner == nil || f.manual {
			return next(ctx, f)
		}
		s.execed(f)
		fire, done := s.owner.Slot(ctx, &f.job)
		if !fire {
			end := f.end()
			end.Ended, end.Outcome, end.Reason = s.clock.Now(), run.Skipped, "left to its owner"
			return end
		}
		defer done()
		f.starting = true
		s.starts.n.Add(1)
		return next(ctx, f)
	}
}
