package ctl

import (
	"strings"

	"cronvisor/internal/base/run"
)

// EventOf is a runner event's wire form; false for event types the wire
// does not know, which a backend should drop rather than send half-filled.
func EventOf(ev run.Event) (WireEvent, bool) {
	switch e := ev.(type) {
	case run.Start:
		return WireEvent{Type: EventRunStarted, Job: e.Job, RunID: e.RunID, Time: e.Started,
			Slot: e.Slot, StartedAt: e.Started, Deadline: e.Deadline, PID: e.PID, Lock: e.Lock, Manual: e.Manual, Attempt: e.Attempt,
			Resources: e.Resources}, true
	case run.Waiting:
		return WireEvent{Type: EventRunWaiting, Job: e.Job, RunID: e.RunID, Time: e.Time, Slot: e.Slot,
			Resource: e.Resource, Held: e.Held, Size: e.Size, Until: e.Until}, true
	case run.Output:
		return WireEvent{Type: EventRunOutput, Job: e.Job, RunID: e.RunID, Time: e.Time,
			Stream: e.Stream, Line: e.Line}, true
	case run.End:
		return WireEvent{Type: EventRunFinished, Job: e.Job, RunID: e.RunID, Time: e.Ended,
			Slot: e.Slot, StartedAt: e.Started, PID: e.PID, Outcome: e.Outcome,
			ExitCode: e.ExitCode, Reason: e.Reason, Manual: e.Manual, Attempt: e.Attempt,
			Retrying: e.Retrying, Amends: e.Amends, Usage: WireUsageOf(e.Usage), RetryAt: e.RetryAt, Progress: e.Progress}, true
	case run.HostLost:
		return hostLostOf(e), true
	case run.Slow:
		return WireEvent{Type: EventRunSlow, Job: e.Job, RunID: e.RunID, Time: e.Time, Slot: e.Slot,
			StartedAt: e.Started, Attempt: e.Attempt, Reason: slowReason(e)}, true
	case run.Fast:
		return WireEvent{Type: EventRunFast, Job: e.Job, RunID: e.RunID, Time: e.Ended, Slot: e.Slot,
			StartedAt: e.Started, Outcome: run.OK, Attempt: e.Attempt, Manual: e.Manual, Reason: e.Reason}, true
	case run.Beat:
		return WireEvent{Type: EventRunBeat, Job: e.Job, RunID: e.RunID, Time: e.Time, Progress: e.Progress}, true
	case run.Skip:
		w := WireEvent{Type: EventRunSkipped, Job: e.Job, RunID: e.RunID, Time: e.Time,
			Slot: e.Slot, Outcome: run.Skipped, Reason: e.Reason, Manual: e.Manual, Resource: e.Resource}
		if e.Holder != nil {
			h := *e.Holder
			w.Holder = &h
		}
		return w, true
	case run.Reload:
		w := WireEvent{Type: EventConfigReloaded, Time: e.Time, Jobs: e.Jobs, Problems: e.Problems}
		if len(e.Problems) > 0 {
			w.Reason = strings.Join(e.Problems, "; ")
		} else {
			w.Reason = e.Summary // what the reload changed, in one line
		}
		return w, true
	}
	return WireEvent{}, false
}

// hostLostOf is a peer's closing of a lost host's run on the wire: an
// interrupted end of that run, at the end its record has (the host's last
// heartbeat), so that a status's last end is the record's.
func hostLostOf(e run.HostLost) WireEvent {
	at := e.Ended
	if at.IsZero() {
		at = e.Time
	}
	return WireEvent{Type: EventHostLost, Job: e.Job, RunID: e.RunID, Time: at, Slot: e.Slot,
		StartedAt: e.Started, Outcome: run.Interrupted, Reason: e.Reason, Manual: e.Manual,
		Attempt: e.Attempt, Host: e.Host}
}

// slowReason is a slow run's reason, also of an engine that gave none.
func slowReason(e run.Slow) string {
	if e.Reason != "" {
		return e.Reason
	}
	return "still running after warn_after " + e.After.String()
}
