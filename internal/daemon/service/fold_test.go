package service

import (
	"context"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// TestAmendedEndCountsOneRun: through the daemon's job state, an attempt
// that failed with a retry planned waits as "retry 2/3", and its amended
// end (retries cut short) is one run and one failure, its outcome the
// last; subscribers hear the retry's time and the slot's attempts.
func TestAmendedEndCountsOneRun(t *testing.T) {
	j := job(t, "a", true)
	j.Retries = 2
	s, fan := newTestService(t, j)
	events, stop := s.Subscribe(context.Background())
	defer stop()
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	retryAt := t0.Add(11 * time.Second)
	fan.Emit(run.Start{Job: "a", RunID: "r1", Slot: t0, Started: t0, PID: 42, Attempt: 1})
	fan.Emit(run.End{Job: "a", RunID: "r1", Slot: t0, Started: t0, Ended: t0.Add(time.Second), Outcome: run.Failed,
		Attempt: 1, Retrying: true, RetryAt: retryAt})
	a := stateOf(t, s, "a")
	if a.State != ctl.StateRetrying || !a.RetryAt.Equal(retryAt) || a.Attempt != 2 || a.MaxAttempts != 3 || a.PID != 0 {
		t.Errorf("waiting for the retry: %+v; want retrying, attempt 2/3 at %v, no pid", a, retryAt)
	}
	fan.Emit(run.End{Job: "a", RunID: "r1", Slot: t0, Started: t0, Ended: t0.Add(time.Second), Outcome: run.Failed,
		Attempt: 1, Amends: true, Reason: "no retry: supervisor stopping"})
	a = stateOf(t, s, "a")
	if a.Counts.Runs != 1 || a.Counts.Failures != 1 {
		t.Errorf("counts %+v, want 1 run and 1 failure", a.Counts)
	}
	if a.State != ctl.StateIdle || a.LastOutcome != run.Failed || !a.LastEndedAt.Equal(t0.Add(time.Second)) || !a.RetryAt.IsZero() {
		t.Errorf("after the amended end: %+v; want idle, last failed at %v, no retry", a, t0.Add(time.Second))
	}
	got := map[ctl.EventType]ctl.WireEvent{}
	for range 3 {
		ev := <-events // buffered: Handle sent them before Emit returned
		if ev.Type != ctl.EventRunFinished || ev.Retrying {
			got[ev.Type] = ev
		}
		if ev.Retrying {
			got["retrying"] = ev
		}
	}
	if r := got["retrying"]; !r.RetryAt.Equal(retryAt) || r.MaxAttempts != 3 {
		t.Errorf("the retrying end on the wire: retry_at %v, max_attempts %d; want %v, 3", r.RetryAt, r.MaxAttempts, retryAt)
	}
	if r := got[ctl.EventRunStarted]; r.MaxAttempts != 3 {
		t.Errorf("run_started on the wire: max_attempts %d, want 3", r.MaxAttempts)
	}
}

// TestServiceFoldsEveryEnd: a lost host's run closed by this daemon (a
// peer) and the runs in flight under overlap allow fold as the console
// folds them, and the daemon counts what still runs.
func TestServiceFoldsEveryEnd(t *testing.T) {
	s, fan := newTestService(t, job(t, "a", true), job(t, "b", true))
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	fan.Emit(run.HostLost{Job: "a", RunID: "x1", Host: "h2", Slot: t0, Started: t0, Ended: t0.Add(time.Minute),
		Time: t0.Add(2 * time.Minute), Reason: "host lost: h2"})
	a := stateOf(t, s, "a")
	if a.LastOutcome != run.Interrupted || !a.LastEndedAt.Equal(t0.Add(time.Minute)) || a.Counts.Runs != 0 {
		t.Errorf("after host_lost: %+v; want last interrupted at %v, no run of its own counted", a, t0.Add(time.Minute))
	}
	// Two runs of b in flight (overlap allow); the newer ends first.
	fan.Emit(run.Start{Job: "b", RunID: "b1", Started: t0, PID: 41})
	fan.Emit(run.Slow{Job: "b", RunID: "b1", Time: t0.Add(time.Second)})
	fan.Emit(run.Start{Job: "b", RunID: "b2", Started: t0.Add(time.Second), PID: 42})
	if d, _ := s.Daemon(context.Background()); d.Finishing != 2 {
		t.Errorf("runs in flight %d, want 2", d.Finishing)
	}
	fan.Emit(run.End{Job: "b", RunID: "b2", Started: t0.Add(time.Second), Ended: t0.Add(2 * time.Second), Outcome: run.OK})
	b := stateOf(t, s, "b")
	if b.State != ctl.StateRunning || b.RunID != "b1" || b.PID != 41 || !b.Slow || !b.LastStartedAt.Equal(t0.Add(time.Second)) {
		t.Errorf("after the newer run ended: %+v; want b1 running (slow), last start %v", b, t0.Add(time.Second))
	}
	fan.Emit(run.End{Job: "b", RunID: "b1", Started: t0, Ended: t0.Add(3 * time.Second), Outcome: run.OK})
	if b = stateOf(t, s, "b"); b.State != ctl.StateIdle || b.Counts.Runs != 2 {
		t.Errorf("after both ended: %+v; want idle, 2 runs", b)
	}
}

// TestSeededRunningRunEnds: a daemon that started while a dead
// supervisor's run went on has the job's last outcome as running from
// the history; that run's end, however it is told, sets the last
// outcome and end.
func TestSeededRunningRunEnds(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	s, fan := newTestService(t, job(t, "a", true))
	s.seed(StoredRuns{"a": {Outcome: run.Running, StartedAt: t0}})
	if a := stateOf(t, s, "a"); a.LastOutcome != run.Running {
		t.Fatalf("seeded: %+v, want last outcome running", a)
	}
	fan.Emit(run.End{Job: "a", RunID: "r0", Started: t0, Ended: t0.Add(8 * time.Second), Outcome: run.Timeout})
	a := stateOf(t, s, "a")
	if a.LastOutcome != run.Timeout || !a.LastEndedAt.Equal(t0.Add(8*time.Second)) || a.State != ctl.StateIdle {
		t.Errorf("after its end: %+v; want idle, last timeout at %v", a, t0.Add(8*time.Second))
	}
}
