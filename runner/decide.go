package runner

import (
	"time"
)

// action is what the scheduler does with a due entry's slot.
type action int

const (
	// reask: the schedule gave no slot (stalled); ask it again from now.
	reask action = iota
	// runSlot: fire the decision's slot.
	runSlot
	// skipDisabled: record the slot as skipped, the job being disabled.
	skipDisabled
	// missAll: the newest slot due is too old to run: every slot that
	// passed is recorded as missed.
	missAll
)

// decision is what one wake-up does with a due entry, worked out by
// decide from the entry and the time alone.
type decision struct {
	act  action
	slot time.Time // the newest slot due: the one runSlot or skipDisabled is for
	// missed slots, from first, are recorded as one skip "missed": the
	// slots a late wake-up passed over (all of them for missAll).
	missed int
	first  time.Time
	late   time.Duration // how late the newest slot is, at now, after its jitter
	// from is where the search for the entry's next slot starts.
	from time.Time
}

// decide is what the scheduler does, at now, with e, which is due: fire
// its slot, or only the newest of the slots a late wake-up (suspend,
// clock step) passed over and record the others as missed, or record
// them all when even the newest is older than the job may start late
// (max(LateTolerance, catch_up)). It reads the schedule and nothing else:
// no clock, no state.
func decide(e entry, now time.Time) decision {
	if e.slot.IsZero() {
		return decision{act: reask, from: now}
	}
	j := e.job
	first := e.slot
	newest, n := e.slot, 1
	next := j.Sched.Next(e.slot)
	if !next.IsZero() && !next.After(now) && next.Sub(e.slot) >= burstGap {
		// Woke late: walk the slots that passed.
		_, newest, n = missedSlots(*j, first.Add(-time.Nanosecond), now)
		next = j.Sched.Next(newest)
	}
	late := now.Sub(newest)
	if newest.Equal(e.slot) && e.due.After(e.slot) {
		late = now.Sub(e.due) // the jitter's delay is the job's own, not lateness
	}
	d := decision{act: runSlot, slot: newest, first: first, late: late, missed: n - 1,
		from: afterFire(next, newest, now)}
	switch {
	case d.late > max(LateTolerance, j.CatchUp):
		d.act, d.missed = missAll, n
	case !j.Enabled:
		d.act = skipDisabled
	}
	return d
}
