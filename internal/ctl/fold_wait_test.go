package ctl

import (
	"testing"
	"time"
)

// TestApplyWaiting: a fire waiting for a resource's slot makes its job
// waiting, with what it waits for, until the fire starts, gives up (a
// skip) or ends unstarted; the wait of another fire is not ended by
// this one's events, and a running run stays the job's state until it
// ends.
func TestApplyWaiting(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	wait := func(runID string) WireEvent {
		return WireEvent{Type: EventRunWaiting, Job: "j", RunID: runID, Time: t0, Resource: "db", Held: 2, Size: 2,
			Until: t0.Add(time.Minute)}
	}
	tests := []struct {
		name      string
		then      WireEvent
		wantState JobState
		wantWait  bool
	}{
		{"took a slot", WireEvent{Type: EventRunStarted, Job: "j", RunID: "r1", StartedAt: t0, Time: t0,
			Resources: []string{"db/0"}}, StateRunning, false},
		{"gave up", WireEvent{Type: EventRunSkipped, Job: "j", RunID: "r1", Time: t0}, StateIdle, false},
		{"ended unstarted", WireEvent{Type: EventRunFinished, Job: "j", RunID: "r1", Time: t0, Outcome: "error"}, StateIdle, false},
		{"another fire skipped", WireEvent{Type: EventRunSkipped, Job: "j", RunID: "r2", Time: t0}, StateWaiting, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := JobStatus{Name: "j", Enabled: true, State: StateIdle}
			Apply(&j, wait("r1"))
			if j.State != StateWaiting || j.WaitingFor == nil || j.WaitingFor.String() != "waiting for db (2/2 held)" {
				t.Fatalf("after run_waiting: state %q, waiting for %+v", j.State, j.WaitingFor)
			}
			Apply(&j, tt.then)
			if j.State != tt.wantState || (j.WaitingFor != nil) != tt.wantWait {
				t.Errorf("state %q, waiting for %+v; want %q, waiting %v", j.State, j.WaitingFor, tt.wantState, tt.wantWait)
			}
			if tt.then.Type == EventRunStarted && len(j.Resources) != 1 {
				t.Errorf("the run's slots: %v, want [db/0]", j.Resources)
			}
		})
	}
	t.Run("while another run runs", func(t *testing.T) {
		j := JobStatus{Name: "j", Enabled: true}
		Apply(&j, WireEvent{Type: EventRunStarted, Job: "j", RunID: "r0", StartedAt: t0, Time: t0})
		Apply(&j, wait("r1"))
		if j.State != StateRunning || j.WaitingFor == nil {
			t.Errorf("state %q, waiting for %+v; want running, and the wait kept", j.State, j.WaitingFor)
		}
		Apply(&j, WireEvent{Type: EventRunFinished, Job: "j", RunID: "r0", Time: t0, Outcome: "ok"})
		if j.State != StateWaiting {
			t.Errorf("after the run's end: state %q, want waiting", j.State)
		}
	})
}
