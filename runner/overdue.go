package runner

import (
	"time"

	"cronvisor/run"
)

// recordOverdue records, as the scheduler stops, the fires that came due
// while it ran but that the loop had not reached (it runs behind under
// overload): without it they would have no record until the next start
// called them missed while down. As when the loop wakes late, the older
// slots are one missed record and the newest is the fire the stop drops
// (or a disabled job's skip); that one is recorded last, so that the next
// start counts its missed fires from the newest and none twice.
func (s *Scheduler) recordOverdue(h *entryHeap, now time.Time) {
	for _, e := range *h {
		if e.slot.IsZero() || e.due.After(now) {
			continue
		}
		j := *e.job
		first, newest, n := missedSlots(j, e.slot.Add(-time.Nanosecond), now)
		if n == 0 { // not a slot of the schedule's own: it stands alone
			newest, n = e.slot, 1
		}
		if n > 1 {
			s.firer.Skip(s.missedSkip(j, first, n-1, "missed: supervisor stopping while behind"))
		}
		reason, class := "supervisor stopping", run.ClassDropped
		if !j.Enabled {
			reason, class = "disabled", run.ClassDisabled
		}
		s.firer.Skip(run.Skip{Job: j.Name, RunID: run.NewID(now), Slot: newest, Time: now, Reason: reason, Class: class})
	}
}
