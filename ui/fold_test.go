package ui

import (
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// TestAmendedEndCountsOneRun: through the console's store, an attempt
// that failed with a retry planned shows "retry 2/3 at …" in its row and
// detail, and its amended end (retries cut short) is one run and one
// failure, its outcome the last: as the daemon counts it.
func TestAmendedEndCountsOneRun(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 18, 52, 0, time.UTC)
	now := at.Add(time.Second)
	retryAt := at.Add(11 * time.Second)
	s := newStore()
	s.setJobs([]ctl.JobStatus{{Name: "a", State: ctl.StateIdle, Enabled: true, Lock: "a", Counts: ctl.Counts{Since: at}}})
	s.apply(ctl.WireEvent{Type: ctl.EventRunStarted, Job: "a", RunID: "r1", Time: at, StartedAt: at, PID: 7,
		Attempt: 1, MaxAttempts: 3, Lock: "a"})
	s.apply(ctl.WireEvent{Type: ctl.EventRunFinished, Job: "a", RunID: "r1", Time: at.Add(time.Second), StartedAt: at,
		Outcome: run.Failed, Attempt: 1, MaxAttempts: 3, Retrying: true, RetryAt: retryAt})
	j := s.at(0)
	if j.State != ctl.StateRetrying || j.Holder != nil || j.PID != 0 {
		t.Errorf("waiting for the retry: %+v; want retrying, no holder, no pid", j)
	}
	if got, want := stateText(j, now), "↺ retry 2/3 at 10:19:03"; got != want {
		t.Errorf("row's state %q, want %q", got, want)
	}
	if got := nowText(j, now); !strings.Contains(got, "retry 2/3 at 10:19:03 (in 10s)") {
		t.Errorf("detail %q, want the retry and its countdown", got)
	}
	s.apply(ctl.WireEvent{Type: ctl.EventRunFinished, Job: "a", RunID: "r1", Time: at.Add(time.Second), StartedAt: at,
		Outcome: run.Failed, Attempt: 1, Amends: true, Reason: "no retry: supervisor stopping"})
	j = s.at(0)
	if j.Counts.Runs != 1 || j.Counts.Failures != 1 {
		t.Errorf("counts %+v, want 1 run and 1 failure", j.Counts)
	}
	if j.State != ctl.StateIdle || j.LastOutcome != run.Failed || !j.RetryAt.IsZero() {
		t.Errorf("after the amended end: %+v; want idle, last failed, no retry", j)
	}
}

// TestHostLostEndsTheRow: a lost host's run that this daemon closed ends
// the row's run as interrupted, frees its lock and is a record.
func TestHostLostEndsTheRow(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	s := newStore()
	s.setJobs([]ctl.JobStatus{{Name: "a", State: ctl.StateRunning, Enabled: true, Lock: "a", RunID: "x1", PID: 9,
		StartedAt: at, Adopted: true, SupervisorPID: 8, LastOutcome: run.Running,
		Holder: &run.Holder{PID: 9, Host: "h2", Job: "a", RunID: "x1"}}})
	s.setLocks([]ctl.LockStatus{{Lock: "a", Held: true, PID: 9, Host: "h2", Job: "a", RunID: "x1"}}, false)
	s.apply(ctl.WireEvent{Type: ctl.EventHostLost, Job: "a", RunID: "x1", Time: at.Add(time.Minute), StartedAt: at,
		Outcome: run.Interrupted, Reason: "host lost: h2", Host: "h2"})
	j := s.at(0)
	if j.State != ctl.StateIdle || j.RunID != "" || j.Holder != nil || j.Adopted || j.LastOutcome != run.Interrupted ||
		!j.LastEndedAt.Equal(at.Add(time.Minute)) {
		t.Errorf("row %+v, want idle, no holder, last interrupted", j)
	}
	if len(s.locks) != 0 {
		t.Errorf("locks %+v, want the lost run's freed", s.locks)
	}
	if r, ok := s.lastRecord("a"); !ok || r.Outcome != run.Interrupted || r.Host != "h2" || r.Reason != "host lost: h2" {
		t.Errorf("last record %+v, want the interrupted run of h2", r)
	}
}
