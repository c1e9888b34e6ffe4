package runner

import (
	"time"

	"cronvisor/internal/base/run"
)

// stoppingBehind is the reason of the fires a stopping scheduler had not
// reached.
const stoppingBehind = "missed: supervisor stopping while behind"

// recordOverdue records, as the scheduler stops, the fires that came due
// while it ran but that the loop had not reached (it runs behind under
// overload): without it they would have no record until the next start
// called them missed while down. Each entry is decided as the running
// loop decides it (decide), and what the loop would have run is the fire
// the stop drops: the older slots are one missed record and the newest is
// recorded after it, so that the next start counts its missed fires from
// the newest and none twice.
func (s *Scheduler) recordOverdue(h *entryHeap, now time.Time) {
	for _, e := range *h {
		if e.due.After(now) {
			continue
		}
		d := decide(*e, now)
		j := *e.job
		switch d.act {
		case missAll:
			s.recordMissed(j, d.first, d.missed, stoppingBehind)
		case runSlot, skipDisabled:
			if d.missed > 0 {
				s.recordMissed(j, d.first, d.missed, stoppingBehind)
			}
			reason, class := "supervisor stopping", run.ClassDropped
			if d.act == skipDisabled {
				reason, class = "disabled", run.ClassDisabled
			}
			s.firer.Skip(run.Skip{Job: j.Name, RunID: run.NewID(now), Slot: d.slot, Time: now, Reason: reason, Class: class})
		}
	}
}
