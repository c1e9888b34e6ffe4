package runner

import (
	"context"
	"errors"
	"time"

	"cronvisor/internal/lock"
	"cronvisor/internal/proc"
)

var (
	errQueueFull    = errors.New("lock held and a fire is already queued")
	errQueueDropped = errors.New("queued fire dropped: supervisor stopping")
)

// waitQueued makes this fire the job's one waiter: it retries the lock until
// it frees. A second fire while one waits is skipped (errQueueFull).
func (s *Supervisor) waitQueued(ctx context.Context, f *fire) (lock.Grant, error) {
	s.mu.Lock()
	if s.queued[f.job.Name] {
		s.mu.Unlock()
		return lock.Grant{}, errQueueFull
	}
	s.queued[f.job.Name] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.queued, f.job.Name)
		s.mu.Unlock()
	}()
	return s.awaitLock(ctx, f)
}

// replace ends a run this supervisor owns that holds the job's lock, like a
// timeout, and takes the lock once it is free. A holder it does not own is
// left alone: the fire is skipped, as the contract says.
func (s *Supervisor) replace(ctx context.Context, f *fire, h lock.Record) (lock.Grant, error) {
	s.mu.Lock()
	old := s.active[h.RunID]
	s.mu.Unlock()
	if old == nil {
		if s.adopter != nil && h.Job == f.job.Name && s.adopter.EndAdopted(h.RunID, true) {
			return s.awaitLock(ctx, f)
		}
		return lock.Grant{}, &lock.HeldError{Lock: f.job.Lock, Record: h}
	}
	old.cancel(ErrReplaced)
	select {
	case <-old.done:
	case <-ctx.Done():
		return lock.Grant{}, errQueueDropped
	}
	return s.acquire(ctx, f)
}

// awaitLock takes the job's lock once it frees, polling it: a holder
// outside this supervisor (an adopted run its keeper is ending, another
// supervisor, flock(1)) cannot tell us when it lets go.
func (s *Supervisor) awaitLock(ctx context.Context, f *fire) (lock.Grant, error) {
	t := s.clock.NewTimer(queuePoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return lock.Grant{}, errQueueDropped
		case <-t.C():
		}
		g, err := s.acquire(ctx, f)
		if !errors.Is(err, lock.ErrLocked) {
			return g, err
		}
		t.Reset(queuePoll)
	}
}

// Pause stops scheduled fires of a job from running (they are recorded as
// skipped, reason "paused"); manual runs still run.
func (s *Supervisor) Pause(job string) {
	s.mu.Lock()
	s.paused[job] = true
	s.mu.Unlock()
}

// Resume undoes Pause.
func (s *Supervisor) Resume(job string) {
	s.mu.Lock()
	delete(s.paused, job)
	s.mu.Unlock()
}

// IsPaused tells whether Pause is in effect for job.
func (s *Supervisor) IsPaused(job string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paused[job]
}

// Kill ends every run of job this supervisor owns like a timeout, its
// slots waiting for a retry and its fires waiting for a resource's slot.
// It returns how many it ended of all three.
func (s *Supervisor) Kill(job string, cause error) int {
	k := s.KillJob(job, cause)
	return k.Runs + k.Retries + k.SlotWaits
}

// Killed is what KillJob ended: runs (own and adopted) signalled, slots
// whose retries it cancelled, fires it stopped waiting for a resource.
type Killed struct {
	Runs, Retries, SlotWaits int
}

// KillJob is Kill, with what it ended told apart.
func (s *Supervisor) KillJob(job string, cause error) Killed {
	s.mu.Lock()
	defer s.mu.Unlock()
	var k Killed
	for _, r := range s.active {
		if r.job == job {
			r.cancel(cause)
			k.Runs++
		}
	}
	for w := range s.waits {
		if w.job != job {
			continue
		}
		w.cancel(cause)
		if w.forSlots {
			k.SlotWaits++
		} else {
			k.Retries++
		}
	}
	if s.adopter != nil && errors.Is(cause, ErrKilled) {
		for _, id := range s.adopter.AdoptedRuns(job) {
			if s.adopter.EndAdopted(id, false) {
				k.Runs++
			}
		}
	}
	return k
}

// KillAll ends every run this supervisor owns (shutdown after the grace).
func (s *Supervisor) KillAll(cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.active {
		r.cancel(cause)
	}
}

// HandOver hands every run in flight over to its keeper instead of
// ending it (proc.ErrDetach), for a supervisor about to exit and leave
// them to the next one: each Fire returns, the run still going, its
// end to be recorded by the next supervisor from what its keeper saw.
// A run without a keeper, or one that must end with its supervisor (a
// lease nothing of the run holds), is ended instead, like a shutdown.
func (s *Supervisor) HandOver() {
	s.KillAll(proc.ErrDetach)
}

// ActiveRun describes a run in flight.
type ActiveRun struct {
	Job     string
	RunID   string
	Started time.Time
}

// Active lists the runs in flight, for status views.
func (s *Supervisor) Active() []ActiveRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ActiveRun, 0, len(s.active))
	for _, r := range s.active {
		out = append(out, ActiveRun{Job: r.job, RunID: r.runID, Started: r.started})
	}
	return out
}

// Queued tells whether a fire of job waits for its lock.
func (s *Supervisor) Queued(job string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queued[job]
}
