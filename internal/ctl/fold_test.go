package ctl

import (
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// amendedEndEvents is the event sequence of TestAmendedEndCountsOneRun:
// one attempt that failed with a retry planned, then the same attempt
// restated as its slot's end when the retries were cut short.
func amendedEndEvents() []WireEvent {
	return []WireEvent{
		{Type: EventRunStarted, Job: "j", RunID: "r1", Time: ref(0), StartedAt: ref(0), PID: 42, Attempt: 1, MaxAttempts: 3, Lock: "j"},
		{Type: EventRunFinished, Job: "j", RunID: "r1", Time: ref(time.Second), StartedAt: ref(0), Outcome: run.Failed,
			Attempt: 1, MaxAttempts: 3, Retrying: true, RetryAt: ref(11 * time.Second)},
		{Type: EventRunFinished, Job: "j", RunID: "r1", Time: ref(time.Second), StartedAt: ref(0), Outcome: run.Failed,
			Attempt: 1, MaxAttempts: 3, Amends: true, Reason: "no retry: supervisor stopping"},
	}
}

// TestAmendedEndCountsOneRun: an attempt whose retries were cut short is
// one run and one failure, and its amended end is the last outcome.
func TestAmendedEndCountsOneRun(t *testing.T) {
	j := JobStatus{Name: "j", Enabled: true}
	for _, ev := range amendedEndEvents() {
		Apply(&j, ev)
	}
	if j.Counts.Runs != 1 || j.Counts.Failures != 1 {
		t.Errorf("counts %+v, want 1 run and 1 failure", j.Counts)
	}
	if j.State != StateIdle || j.RunID != "" || !j.RetryAt.IsZero() || j.Attempt != 0 {
		t.Errorf("state %q run %q retry at %v attempt %d, want idle with no run and no retry", j.State, j.RunID, j.RetryAt, j.Attempt)
	}
	if j.LastOutcome != run.Failed || !j.LastEndedAt.Equal(ref(time.Second)) {
		t.Errorf("last %q at %v, want failed at %v", j.LastOutcome, j.LastEndedAt, ref(time.Second))
	}
}

// TestApply folds event sequences into a status and checks what it says.
func TestApply(t *testing.T) {
	started := WireEvent{Type: EventRunStarted, Job: "j", RunID: "r1", Time: ref(0), StartedAt: ref(0), PID: 42,
		Deadline: ref(time.Minute), Attempt: 1, MaxAttempts: 3}
	failedRetrying := WireEvent{Type: EventRunFinished, Job: "j", RunID: "r1", Time: ref(time.Second), StartedAt: ref(0),
		Outcome: run.Failed, Attempt: 1, MaxAttempts: 3, Retrying: true, RetryAt: ref(11 * time.Second)}
	second := WireEvent{Type: EventRunStarted, Job: "j", RunID: "r2", Time: ref(11 * time.Second), StartedAt: ref(11 * time.Second),
		PID: 43, Attempt: 2, MaxAttempts: 3}
	adopted := JobStatus{Name: "j", Enabled: true, State: StateRunning, RunID: "r0", PID: 7, StartedAt: ref(-time.Minute),
		Adopted: true, SupervisorPID: 6, LastOutcome: run.Running, LastStartedAt: ref(-time.Minute),
		Holder: &run.Holder{PID: 7, Job: "j", RunID: "r0"}}
	tests := []struct {
		name   string
		seed   JobStatus
		events []WireEvent
		check  func(j JobStatus) bool
		want   string
	}{
		{"a run in flight", JobStatus{Enabled: true}, []WireEvent{started},
			func(j JobStatus) bool {
				return j.State == StateRunning && j.RunID == "r1" && j.PID == 42 && j.Attempt == 1 && j.MaxAttempts == 3 &&
					j.Deadline.Equal(ref(time.Minute)) && j.LastStartedAt.Equal(ref(0)) && j.Counts.Runs == 0
			}, "running r1, pid 42, attempt 1/3, nothing counted yet"},
		{"waiting for a retry", JobStatus{Enabled: true}, []WireEvent{started, failedRetrying},
			func(j JobStatus) bool {
				return j.State == StateRetrying && j.RetryAt.Equal(ref(11*time.Second)) && j.Attempt == 2 &&
					j.MaxAttempts == 3 && j.RunID == "" && j.Counts.Runs == 1 && j.Counts.Failures == 0 &&
					j.LastOutcome == run.Failed
			}, "retrying: attempt 2/3 at +11s, one run, no failed slot yet"},
		{"the retry starts", JobStatus{Enabled: true}, []WireEvent{started, failedRetrying, second},
			func(j JobStatus) bool {
				return j.State == StateRunning && j.RunID == "r2" && j.RetryAt.IsZero() && j.Attempt == 2
			}, "running r2, attempt 2, no retry time"},
		{"the last attempt fails", JobStatus{Enabled: true}, []WireEvent{started, failedRetrying, second,
			{Type: EventRunFinished, Job: "j", RunID: "r2", Time: ref(12 * time.Second), Outcome: run.Failed, Attempt: 2}},
			func(j JobStatus) bool {
				return j.State == StateIdle && j.Counts.Runs == 2 && j.Counts.Failures == 1 && j.RetryAt.IsZero()
			}, "idle, two runs, one failed slot"},
		{"an adopted run ends", adopted, []WireEvent{{Type: EventRunFinished, Job: "j", RunID: "r0", Time: ref(0),
			StartedAt: ref(-time.Minute), Outcome: run.Timeout}},
			func(j JobStatus) bool {
				return j.State == StateIdle && j.RunID == "" && j.PID == 0 && !j.Adopted && j.SupervisorPID == 0 &&
					j.Holder == nil && j.LastOutcome == run.Timeout && j.LastEndedAt.Equal(ref(0)) &&
					j.Counts.Runs == 1 && j.Counts.Failures == 1
			}, "idle, adoption and holder gone, last timeout at its end"},
		{"a lost host's run", adopted, []WireEvent{{Type: EventHostLost, Job: "j", RunID: "r0", Time: ref(-time.Second),
			Outcome: run.Interrupted, Reason: "host lost: h2", Host: "h2"}},
			func(j JobStatus) bool {
				return j.State == StateIdle && j.RunID == "" && j.LastOutcome == run.Interrupted &&
					j.LastEndedAt.Equal(ref(-time.Second)) && j.Counts.Runs == 0 && j.Counts.Failures == 0
			}, "idle, last interrupted at the host's last heartbeat, no run of this daemon's counted"},
		{"an older run ends under overlap allow", JobStatus{Enabled: true}, []WireEvent{started, second,
			{Type: EventRunFinished, Job: "j", RunID: "r1", Time: ref(20 * time.Second), Outcome: run.OK}},
			func(j JobStatus) bool {
				return j.State == StateRunning && j.RunID == "r2" && j.LastOutcome == run.OK && j.Counts.Runs == 1
			}, "still running r2, last ok"},
		{"ends while paused", JobStatus{Enabled: true, Paused: true}, []WireEvent{started,
			{Type: EventRunFinished, Job: "j", RunID: "r1", Time: ref(time.Second), Outcome: run.OK}},
			func(j JobStatus) bool { return j.State == StatePaused }, "paused"},
		{"a skip", JobStatus{Enabled: true}, []WireEvent{{Type: EventRunSkipped, Job: "j", RunID: "s1", Time: ref(0), Outcome: run.Skipped}},
			func(j JobStatus) bool {
				return j.LastOutcome == run.Skipped && j.LastEndedAt.Equal(ref(0)) && j.Counts.Skips == 1 && j.Counts.Runs == 0
			}, "last skipped, one skip"},
		{"slow", JobStatus{Enabled: true}, []WireEvent{started, {Type: EventRunSlow, Job: "j", RunID: "r1", Time: ref(time.Second)}},
			func(j JobStatus) bool { return j.Slow }, "slow"},
		{"output changes nothing", JobStatus{Enabled: true}, []WireEvent{{Type: EventRunOutput, Job: "j", RunID: "r1", Line: "x"}},
			func(j JobStatus) bool { return j.State == "" && j.Counts == (Counts{}) }, "untouched"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := tc.seed
			for _, ev := range tc.events {
				Apply(&j, ev)
			}
			if !tc.check(j) {
				t.Errorf("got %+v\nwant %s", j, tc.want)
			}
		})
	}
}
