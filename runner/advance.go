package runner

import (
	"maps"
	"time"

	"cronvisor/internal/base/run"
)

// stallRetry is how long the scheduler waits before it asks a schedule
// again for a next fire it could not compute. A schedule is pure, so an
// answer only changes with the zone database or the clock; an hour keeps
// the error visible without flooding the log.
const stallRetry = time.Hour

// burstGap: consecutive slots closer than this are fires that crond runs
// together, right after a DST jump (several fixed times inside one
// spring-forward gap get slots a nanosecond apart). Each of them runs; none
// counts as "late" because the one before it started a moment after its
// slot. Ordinary slots are at least a second apart.
const burstGap = time.Microsecond

// advance sets e to its first slot after from, and its due time with this
// fire's jitter. A schedule that yields no slot is kept, due again in
// stallRetry, and reported, rather than parked silently.
func (s *Scheduler) advance(e *entry, from, now time.Time) {
	e.slot = e.job.Sched.Next(from)
	if e.slot.IsZero() {
		e.due = now.Add(stallRetry)
		st := run.Stall{Job: e.job.Name, Time: now, After: from, Retry: e.due}
		s.mu.Lock()
		s.stalls[e.job.Name] = st
		s.mu.Unlock()
		s.emit(st)
		return
	}
	s.mu.Lock()
	delete(s.stalls, e.job.Name)
	s.mu.Unlock()
	e.due = e.slot.Add(s.delay(e.job, e.slot))
}

// afterFire is where the search for a job's next slot starts once the
// fire for slot has been handled at now: the slot itself when the next one
// is part of the same DST burst, else now, so that a late wake-up never
// fires slots that already passed.
func afterFire(next, slot, now time.Time) time.Time {
	if !next.IsZero() && next.Sub(slot) < burstGap {
		return slot
	}
	return maxTime(slot, now)
}

// Stalls returns the jobs whose next fire could not be computed, with
// when that was last tried.
func (s *Scheduler) Stalls() map[string]run.Stall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.stalls)
}
