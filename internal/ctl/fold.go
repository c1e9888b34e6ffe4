package ctl

import (
	"time"

	"cronvisor/internal/base/run"
)

// Apply folds one event into j, the status of the event's job: its
// current run, its waiting retry, its last outcome and its counts. It is
// the one fold of the wire: the daemon's job states (package service) and
// the console's rows (package ui) both change only through it, so that the
// two say the same after the same events. Events that change no job's
// runs (output, reloads, pauses, resync) leave j as it was.
//
// What Apply does not know it leaves alone: the lock's holder beyond the
// run it ends, the pause, the next fire. Under overlap allow a job has
// several runs in flight; j's current run is the newest that started, and
// the end of an older one changes only the last outcome and the counts.
func Apply(j *JobStatus, ev WireEvent) {
	switch ev.Type {
	case EventRunStarted:
		started(j, ev)
	case EventRunSlow:
		if j.RunID == ev.RunID {
			j.Slow, j.SlowReason = true, ev.Reason
		}
	case EventRunBeat:
		if j.RunID == ev.RunID {
			j.Progress, j.LastBeatAt = ev.Progress, ev.Time
		}
	case EventRunFinished, EventHostLost:
		ended(j, ev)
	case EventRunSkipped:
		j.LastOutcome, j.LastEndedAt = run.Skipped, ev.Time
		j.Counts.Skips++
		waitEnded(j, ev.RunID)
	case EventRunWaiting:
		j.WaitingFor = &Waiting{RunID: ev.RunID, Resource: ev.Resource, Held: ev.Held, Size: ev.Size, Since: ev.Time, Until: ev.Until}
		if j.RunID == "" {
			j.State = StateWaiting
		}
	}
}

// waitEnded ends the wait of runID's fire for a resource's slot, if it
// is the one j shows: it gave up (a skip), or was not admitted (an end
// without a start).
func waitEnded(j *JobStatus, runID string) {
	if w := j.WaitingFor; w != nil && w.RunID == runID {
		j.WaitingFor = nil
		if j.State == StateWaiting {
			j.State = restingState(j)
		}
	}
}

func started(j *JobStatus, ev WireEvent) {
	j.State, j.RunID, j.PID = StateRunning, ev.RunID, ev.PID
	j.StartedAt, j.Deadline = ev.StartedAt, ev.Deadline
	j.Attempt, j.MaxAttempts, j.RetryAt, j.Slow, j.SlowReason = ev.Attempt, ev.MaxAttempts, time.Time{}, false, ""
	j.Adopted, j.SupervisorPID = false, 0 // this daemon's own run
	j.Progress, j.LastBeatAt = "", time.Time{}
	j.Resources = ev.Resources
	if w := j.WaitingFor; w != nil && w.RunID == ev.RunID {
		j.WaitingFor = nil
	}
	if ev.StartedAt.After(j.LastStartedAt) {
		j.LastStartedAt = ev.StartedAt
	}
}

// ended is a run's end: run_finished, or host_lost (a peer closed it).
// The end of the current run clears it, also a run the status was seeded
// with (adopted from a dead supervisor) rather than saw start. An
// amended end restates an attempt counted before: it ends the slot (and
// its wait for a retry) and sets the last outcome, but counts no run; the
// failure it may be is counted then, since the attempt it restates was
// not, with a retry to follow. A lost host's run is another host's: it
// ends, but the counts (this daemon's runs) leave it out, as the metrics
// do.
func ended(j *JobStatus, ev WireEvent) {
	waitEnded(j, ev.RunID)
	if j.RunID == ev.RunID && ev.RunID != "" {
		j.State, j.RunID, j.PID = restingState(j), "", 0
		j.StartedAt, j.Deadline = time.Time{}, time.Time{}
		j.Attempt, j.MaxAttempts, j.Slow, j.SlowReason = 0, 0, false, ""
		j.Adopted, j.SupervisorPID = false, 0
		j.Progress, j.LastBeatAt = "", time.Time{}
		j.Resources = nil
		if j.Holder != nil && j.Holder.RunID == ev.RunID {
			j.Holder = nil
		}
	}
	switch {
	case ev.Retrying && j.RunID == "":
		j.State, j.RetryAt = StateRetrying, ev.RetryAt
		j.Attempt, j.MaxAttempts = ev.Attempt+1, ev.MaxAttempts
	case !ev.Retrying && j.State == StateRetrying:
		j.State, j.RetryAt, j.Attempt, j.MaxAttempts = restingState(j), time.Time{}, 0, 0
	}
	j.LastOutcome, j.LastEndedAt = ev.Outcome, ev.Time
	if ev.StartedAt.After(j.LastStartedAt) {
		j.LastStartedAt = ev.StartedAt
	}
	if ev.Type == EventRunFinished && !ev.Amends { // a lost host's run is not this daemon's to count
		j.Counts.Runs++
	}
	if failedSlot(ev) {
		j.Counts.Failures++
	}
}

// restingState is a job's state with no run in flight and no retry to
// wait for: waiting while a fire of it waits for a resource's slot.
func restingState(j *JobStatus) JobState {
	switch {
	case j.WaitingFor != nil:
		return StateWaiting
	case j.Paused:
		return StatePaused
	case !j.Enabled:
		return StateDisabled
	}
	return StateIdle
}

// failedSlot reports whether ev ends its slot failed: an attempt that
// failed with another one to follow is not a failure of the slot.
func failedSlot(ev WireEvent) bool {
	switch ev.Outcome {
	case run.Failed, run.Timeout, run.Error:
		return !ev.Retrying
	}
	return false
}
