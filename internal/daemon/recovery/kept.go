package recovery

import (
	"cronvisor/internal/base/run"
	"cronvisor/internal/proc"
)

// readEnd reads the End the keeper of a dead supervisor's run wrote, if
// it did, into e: the run's real end, recorded instead of "interrupted".
// What went wrong for the keeper (its notes: a full disk, a log it could
// not write) is logged here: the keeper has no log of its own.
func (r *Recoverer) readEnd(path string, e *run.End) bool {
	k, err := proc.ReadEnd(path)
	if err != nil || k.Ended.IsZero() {
		return false
	}
	for _, note := range k.Notes {
		r.cfg.Log.Warn("the keeper of a dead supervisor's run reports", "job", e.Job, "run_id", e.RunID, "keeper_pid", k.Keeper, "note", note)
	}
	e.Ended, e.Reason, e.Usage, e.Progress = k.Ended, k.Reason, k.Usage, k.Progress
	// A supervisor that died between the exec and the lock record's pid
	// left no start: the keeper's End has it, when it found the run.
	if e.Started.IsZero() {
		e.Started = k.Run.Started
	}
	if e.Ended.Before(e.Started) {
		// The keeper saw a process that exited at once before its
		// supervisor noted the start: the record ends at its start.
		e.Ended = e.Started
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
	case r.endedWithoutKeeper(e):
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

// endedWithoutKeeper reports whether e is the end of a run that an
// operator's kill (or a replacing fire) ended while its keeper did not
// answer (see EndAdopted): the keeper, resumed, saw the run exit of the
// signal this daemon sent, which it is recorded as, with why.
func (r *Recoverer) endedWithoutKeeper(e *run.End) bool {
	keeper, via, _, silent := r.Silent(e.RunID)
	reason, outcome := r.askedReason(e.RunID)
	if !silent || keeper == 0 || via == "" || reason == "" {
		return false
	}
	e.Outcome, e.Class = outcome, run.ClassKilled
	if outcome == run.Replaced {
		e.Class = run.ClassReplaced
	}
	e.Reason = reason + " (its keeper did not answer: ended through its " + via + ")"
	return true
}
