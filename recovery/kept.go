package recovery

import (
	"cronvisor/proc"
	"cronvisor/run"
)

// readEnd reads the End the keeper of a dead supervisor's run wrote, if
// it did, into e: the run's real end, recorded instead of "interrupted".
func readEnd(path string, e *run.End) bool {
	k, err := proc.ReadEnd(path)
	if err != nil || k.Ended.IsZero() {
		return false
	}
	e.Ended, e.Reason, e.Usage = k.Ended, k.Reason, k.Usage
	// A supervisor that died between the exec and the lock record's pid
	// left no start: the keeper's End has it, when it found the run.
	if e.Started.IsZero() {
		e.Started = k.Run.Started
	}
	if e.PID == 0 {
		e.PID = k.Run.PID
	}
	if k.ExitCode >= 0 {
		code := k.ExitCode
		e.ExitCode = &code
	}
	switch {
	case k.Outcome == proc.TimedOut:
		e.Outcome = run.Timeout
	case k.Outcome == proc.Canceled && k.Replaced:
		e.Outcome, e.Class = run.Replaced, run.ClassReplaced
	case k.Outcome == proc.Canceled:
		e.Outcome, e.Class = run.Interrupted, run.ClassKilled
	case k.ExitCode == 0:
		e.Outcome = run.OK
	default:
		e.Outcome = run.Failed
	}
	if e.Outcome != run.OK {
		e.Reason = k.Usage.WithOOM(e.Reason) // as the supervisor would have said
	}
	return true
}
