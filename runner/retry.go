package runner

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"cronvisor/internal/base/durations"
	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/lock"
)

// withRetries runs the job's attempts for one slot under f's grant (the
// zero Grant for overlap allow), whose lease stays held from the first to
// the last so that no other supervisor runs the slot in between. The
// slot's result is the last attempt's. Each attempt has its own run id
// and its own record.
func (s *Supervisor) withRetries(next runFunc) runFunc {
	return func(ctx context.Context, f *fire) run.End {
		for f.attempt = max(f.attempt, 1); ; f.attempt++ {
			end := next(ctx, f)
			if !end.Retrying {
				return end
			}
			switch cut := s.backoff(ctx, f, end.RetryAt); {
			case errors.Is(cut, errHandingOver):
				return s.leaveRetries(f, end)
			case cut != nil:
				return s.endRetries(f, end, cut)
			}
			f.runID = run.NewID(s.clock.Now())
		}
	}
}

// retryWait is a slot waiting for its next attempt, or (forSlots) a
// fire waiting for a resource's slot; Kill of its job cancels it, so
// that an operator's kill also ends the retries and the waits.
type retryWait struct {
	job      string
	ctx      context.Context
	cancel   context.CancelCauseFunc
	forSlots bool
}

// holdRetry registers the wait for f's next attempt, before the end of
// the attempt before it is told: a kill that reads that end (and finds
// the run gone) finds the wait to cancel instead of nothing.
func (s *Supervisor) holdRetry(ctx context.Context, f *fire) {
	wctx, cancel := context.WithCancelCause(ctx)
	f.wait = &retryWait{job: f.job.Name, ctx: wctx, cancel: cancel}
	s.mu.Lock()
	s.waits[f.wait] = true
	s.mu.Unlock()
}

// backoff waits until at on the supervisor's clock, with the lock record
// saying so (lock.RetryMarker). It returns nil once at has come, or why
// the wait was cut short: ctx ended (the supervisor stops: no further
// attempt starts) or the job was killed (ErrKilled). The wait ends at the
// time the attempt's end planned and reported, not a backoff counted
// from here: recording that end takes time, and a next supervisor
// resuming from the lock record must start the attempt when this one
// would have.
func (s *Supervisor) backoff(ctx context.Context, f *fire, at time.Time) error {
	if m, ok := f.grant.Lease.(lock.RetryMarker); ok {
		_ = m.SetRetry(at) // unmarked, a dead supervisor's slot is only not told apart
	}
	if f.wait == nil {
		s.holdRetry(ctx, f)
	}
	w := f.wait
	f.wait = nil
	defer func() {
		w.cancel(nil)
		s.mu.Lock()
		delete(s.waits, w)
		s.mu.Unlock()
	}()
	t := s.clock.NewTimer(max(at.Sub(s.clock.Now()), 0))
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-w.ctx.Done():
		if ctx.Err() != nil && s.handingOver.Load() {
			return errHandingOver
		}
		if ctx.Err() != nil {
			return errStopping
		}
		return context.Cause(w.ctx)
	}
}

// errStopping cuts a backoff short when the supervisor stops.
var errStopping = errors.New("supervisor stopping")

// endRetries ends a slot whose backoff was cut short by cause: its last
// attempt, recorded and reported with a retry to come, is recorded again
// as the slot's end with the reason why no retry started, then the lock
// is released and the end reported (Amends), so that it notifies as a
// slot that ran out of attempts does.
func (s *Supervisor) endRetries(f *fire, end run.End, cause error) run.End {
	note := "no retry: supervisor stopping"
	if errors.Is(cause, ErrKilled) {
		note = "no retry: killed by operator"
	}
	end.Reason = strings.TrimPrefix(end.Reason+"; "+note, "; ")
	end.Retrying, end.Amends, end.RetryAt = false, true, time.Time{}
	recorded := s.endFire(end, f.grant.Lease != nil)
	s.releaseSlots(f)
	if f.grant.Lease != nil {
		s.release(f.grant.Lease, end, recorded)
	}
	return end
}

// retryDelay is the wait after attempt n: retry_backoff doubling per
// attempt, capped at retry_backoff_max.
func retryDelay(job config.Job, n int) time.Duration {
	d := job.RetryBackoff
	for i := 1; i < n && d < job.RetryBackoffMax; i++ {
		d *= 2
	}
	return min(d, max(job.RetryBackoffMax, job.RetryBackoff))
}

// planRetry decides whether another attempt follows f, due the backoff
// after f ended, and says in f's reason when one was due but is not
// started because it would begin at or after the job's next slot (that
// fire is the next try) or because the supervisor is stopping.
func (s *Supervisor) planRetry(ctx context.Context, job config.Job, f *run.End) {
	if f.Attempt > job.Retries || !retriable(job.RetryOn, f.Outcome) {
		return
	}
	start := f.Ended.Add(retryDelay(job, f.Attempt)) // conclude always sets Ended
	note := ""
	switch next := nextSlot(job, f.Slot); {
	case ctx.Err() != nil:
		note = "no retry: supervisor stopping"
	case !next.IsZero() && !start.Before(next):
		note = "no retry: attempt " + itoa(f.Attempt+1) + " would start at or after the next slot " + next.Format(time.RFC3339)
	default:
		f.Retrying, f.RetryAt = true, start
		return
	}
	if f.Reason != "" {
		note = f.Reason + "; " + note
	}
	f.Reason = note
}

func retriable(on config.RetryOn, o run.Outcome) bool {
	return (o == run.Failed && on.Failed) || (o == run.Timeout && on.Timeout)
}

func nextSlot(job config.Job, slot time.Time) time.Time {
	if job.Sched == nil || slot.IsZero() {
		return time.Time{}
	}
	return job.Sched.Next(slot)
}

func itoa(n int) string { return strconv.Itoa(n) }

// warnSlow emits run.Slow once the run has lasted the job's warn_after
// (or, with warn_after: auto, the bound learned from its runs), unless it
// ends (runCtx done, or the returned stop called) first. stop waits for
// the watcher, so run.Slow never follows the run's run.End.
func (s *Supervisor) warnSlow(runCtx context.Context, f *fire) (stop func()) {
	job := &f.job
	after, basis := s.slowAfter(runCtx, job)
	if after <= 0 || (job.Timeout > 0 && after >= job.Timeout) {
		return func() {}
	}
	// Taken now: the fire's run id and attempt move on once this one ends.
	runID, slot, attempt := f.runID, f.slot, f.attempt
	started := s.clock.Now()
	t := s.clock.NewTimer(after)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer t.Stop()
		select {
		case <-t.C():
			s.emit(run.Slow{Job: job.Name, RunID: runID, Slot: slot, Started: started, Time: s.clock.Now(),
				After: after, Attempt: attempt, Reason: "running " + durations.Round(after).String() + "; " + basis})
		case <-quit:
		case <-runCtx.Done():
		}
	}()
	return func() { close(quit); <-done }
}

// setHolderPID rewrites the lease's record once the attempt's process
// started: its pid, and for a retry its run id. The next attempt of a
// slot keeps the lock, and once it has started the record must name it
// (recovery rebuilds a dead supervisor's run from it). Until then the
// record names the attempt before, whose record is final: a supervisor
// dying in the backoff leaves nothing to recover.
func setHolderPID(lease lock.Lease, runID string, pid, attempt int) {
	if attempt > 1 {
		_ = lease.SetRun(runID, pid)
		return
	}
	_ = lease.SetPID(pid)
}
