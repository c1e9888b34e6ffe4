package runner

import (
	"context"
	"errors"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/semaphore"
)

// fire is one fire of a job on its way through the supervisor: made once
// by FireWithID, its grant set by the overlap policy, its run id and
// attempt moved on by each retry.
type fire struct {
	job    config.Job
	slot   time.Time
	runID  string
	manual bool // an operator's fire, not the schedule's: its records say manual
	// triggered is `cronvisor trigger`'s manual fire, which keeps the
	// rules of a scheduled one (see exempt).
	triggered bool
	attempt   int // 1 for the first; 0 until attempts begin (a resumed slot's next)
	// resumed: the slot's earlier attempts were run by a supervisor that
	// stopped or died in their backoff (see ResumeRetries).
	resumed bool
	// forced: an operator's trigger that goes past the job's pause.
	forced bool
	grant  lock.Grant // zero for overlap allow, and until the lock is taken
	// fullResource is the resource a fire skipped for a full one found
	// full, for its Skip.
	fullResource string
	// wait is the registered wait for the next attempt, from the end of
	// an attempt with a retry to come until its backoff (see holdRetry).
	wait *retryWait
	// starting says the fire still counts among the Starts: until its
	// child's exec, or its end without one (see execed).
	starting bool
	// held are the resource slots f holds (withSlots), nil for none;
	// resourceWait how long it waited for them, until its Start or Skip.
	held         *semaphore.Held
	resourceWait time.Duration
}

// end is the start of every record of f's end: which fire it is.
func (f *fire) end() run.End {
	return run.End{Job: f.job.Name, RunID: f.runID, Slot: f.slot, Manual: f.manual}
}

// exempt reports whether f skips the rules of a scheduled fire (a pause,
// waiting or replacing for its overlap policy, the slot check): a manual
// fire's, but a trigger's.
func (f *fire) exempt() bool { return f.manual && !f.triggered }

// runFunc takes a fire to its end.
type runFunc func(ctx context.Context, f *fire) run.End

// step is a rule wrapped around the rest of a fire's way (robfig/cron's
// JobWrapper): it may end the fire itself, or go on to next.
type step func(next runFunc) runFunc

// chain wraps steps around last, the first step outermost.
func chain(last runFunc, steps ...step) runFunc {
	for i := len(steps) - 1; i >= 0; i-- {
		last = steps[i](last)
	}
	return last
}

// fireSteps is the way of every fire: a fleet's fire that another host
// owns goes no further, paused jobs skip, so do slots their calendars
// leave out, the overlap policy takes the lock, the resources' slots are
// taken, each attempt is admitted, retries repeat it. Retries wrap
// admission so that every attempt's run id is admitted.
func (s *Supervisor) fireSteps() runFunc {
	return chain(s.attempt, s.owned, s.unlessPaused, s.onCalendar, s.underLock, s.withSlots, s.withRetries, s.admitted)
}

// execed takes f off the Starts: at its child's exec, or at its end.
// Both are on the fire's own goroutine (proc calls OnStart from Run).
func (s *Supervisor) execed(f *fire) {
	if f.starting {
		f.starting = false
		s.starts.n.Add(-1)
	}
}

// unlessPaused skips the scheduled fires of a paused job; manual and
// forced ones run.
func (s *Supervisor) unlessPaused(next runFunc) runFunc {
	return func(ctx context.Context, f *fire) run.End {
		if !f.exempt() && !f.forced && s.IsPaused(f.job.Name) {
			return s.skip(f, "paused", run.ClassPaused, nil)
		}
		return next(ctx, f)
	}
}

// underLock takes the job's lock as its overlap policy says, and skips
// the fire when it cannot (see refused). Overlap allow takes none.
// Manual fires never wait or replace.
func (s *Supervisor) underLock(next runFunc) runFunc {
	return func(ctx context.Context, f *fire) run.End {
		if f.job.Overlap == config.OverlapAllow {
			return next(ctx, f)
		}
		g, err := s.acquire(ctx, f)
		var held *lock.HeldError
		if errors.As(err, &held) && !f.exempt() {
			switch f.job.Overlap {
			case config.OverlapQueue:
				g, err = s.waitQueued(ctx, f)
			case config.OverlapReplace:
				g, err = s.replace(ctx, f, held.Record)
			}
		}
		if err != nil {
			return s.refused(f, err)
		}
		f.grant = g
		return next(ctx, f)
	}
}

// admitted starts an attempt only once the recorder has room for its
// records (see Recorder.Admit).
func (s *Supervisor) admitted(next runFunc) runFunc {
	return func(ctx context.Context, f *fire) run.End {
		if err := s.rec.Admit(f.runID); err != nil {
			return s.notAdmitted(f, err)
		}
		return next(ctx, f)
	}
}
