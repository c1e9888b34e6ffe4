package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/lock"
)

// errHandingOver cuts a backoff short when the supervisor exits leaving
// its slots to the next one (HandingOver).
var errHandingOver = errors.New("supervisor handing over")

// HandingOver marks this supervisor as about to exit and leave its work to
// the next one on its state dir (SIGUSR2): a slot waiting for a retry is
// then left, its lock record saying when the next attempt is due
// (lock.Record.RetryAt), for the next supervisor to ResumeRetries, instead of
// ended with "no retry". Call it before the fires' context is cancelled.
func (s *Supervisor) HandingOver() { s.handingOver.Store(true) }

// leaveRetries leaves f's slot, waiting for its next attempt, to the next
// supervisor: nothing is recorded or told (the attempt's end was), and the
// lock is let go with its record still in flight and saying when the next
// attempt is due.
func (s *Supervisor) leaveRetries(f *fire, end run.End) run.End {
	s.releaseSlots(f) // the next supervisor takes them again
	if f.grant.Lease != nil {
		if err := f.grant.Lease.ReleaseInFlight(); err != nil && !errors.Is(err, lock.ErrReleased) {
			s.log.Warn("leaving a slot's retries to the next supervisor", "run_id", f.runID, "err", err)
		}
	}
	s.log.Info("left a slot waiting for a retry to the next supervisor", "job", f.job.Name, "run_id", f.runID,
		"attempt", f.attempt)
	end.Detached = true
	return end
}

// ResumeRetries runs the remaining attempts of a slot that a stopped or dead
// supervisor left waiting for a retry: attempt is the last one run
// (recorded), at when the next is due. It waits until at (an operator's
// kill of the job cuts the wait, as a backoff's), then takes the job's
// lock without the slot check (the slot is its own) and goes on as the
// retries would have, up to the job's retries. It blocks until the slot
// ends, or ctx ends (the slot is left as it was, to the next supervisor),
// and returns why it did not take the slot on: no attempt left, the
// job's next slot comes first, or killed while waiting (ErrKilled).
func (s *Supervisor) ResumeRetries(ctx context.Context, job config.Job, slot time.Time, attempt int, at time.Time, manual bool) error {
	if attempt > job.Retries {
		return fmt.Errorf("attempt %d was the last of retries %d", attempt, job.Retries)
	}
	if next := nextSlot(job, slot); !next.IsZero() && !at.Before(next) {
		return fmt.Errorf("attempt %d would start at or after the next slot %s", attempt+1, next.Format(time.RFC3339))
	}
	now := s.clock.Now()
	f := &fire{job: job, slot: slot, runID: run.NewID(now), manual: manual, attempt: attempt + 1, resumed: true}
	switch cut := s.backoff(ctx, f, at); {
	case errors.Is(cut, ErrKilled):
		return cut
	case cut != nil:
		return nil // stopping: the lock record still says the retry is due
	}
	s.resumes(ctx, f)
	return nil
}

// resumeSteps is the way of a resumed slot's attempts: its lock, then
// retries from the attempt it resumes at, each admitted. A paused job's
// retries go on, as they would have with their supervisor.
func (s *Supervisor) resumeSteps() runFunc {
	return chain(s.attempt, s.underLock, s.withSlots, s.withRetries, s.admitted)
}
