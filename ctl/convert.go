package ctl

import (
	"strings"

	"cronvisor/run"
)

// EventOf is a runner event's wire form; false for event types the wire
// does not know, which a backend should drop rather than send half-filled.
func EventOf(ev run.Event) (WireEvent, bool) {
	switch e := ev.(type) {
	case run.Start:
		return WireEvent{Type: EventRunStarted, Job: e.Job, RunID: e.RunID, Time: e.Started,
			Slot: e.Slot, StartedAt: e.Started, Deadline: e.Deadline, PID: e.PID, Lock: e.Lock, Manual: e.Manual, Attempt: e.Attempt}, true
	case run.Output:
		return WireEvent{Type: EventRunOutput, Job: e.Job, RunID: e.RunID, Time: e.Time,
			Stream: e.Stream, Line: e.Line}, true
	case run.End:
		return WireEvent{Type: EventRunFinished, Job: e.Job, RunID: e.RunID, Time: e.Ended,
			Slot: e.Slot, StartedAt: e.Started, PID: e.PID, Outcome: e.Outcome,
			ExitCode: e.ExitCode, Reason: e.Reason, Manual: e.Manual, Attempt: e.Attempt,
			Retrying: e.Retrying, Amends: e.Amends, Usage: WireUsageOf(e.Usage)}, true
	case run.Slow:
		return WireEvent{Type: EventRunSlow, Job: e.Job, RunID: e.RunID, Time: e.Time, Slot: e.Slot,
			StartedAt: e.Started, Attempt: e.Attempt, Reason: "still running after warn_after " + e.After.String()}, true
	case run.Skip:
		w := WireEvent{Type: EventRunSkipped, Job: e.Job, RunID: e.RunID, Time: e.Time,
			Slot: e.Slot, Outcome: run.Skipped, Reason: e.Reason, Manual: e.Manual}
		if e.Holder != nil {
			h := *e.Holder
			w.Holder = &h
		}
		return w, true
	case run.Reload:
		w := WireEvent{Type: EventConfigReloaded, Time: e.Time, Jobs: e.Jobs, Problems: e.Problems}
		if len(e.Problems) > 0 {
			w.Reason = strings.Join(e.Problems, "; ")
		}
		return w, true
	}
	return WireEvent{}, false
}
