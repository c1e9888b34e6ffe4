package ctl

import (
	"testing"
	"time"
)

// TestApplyBeat: a beat of the current run sets its progress and time; a
// beat of another run changes nothing; the run's end, or the next
// start, clears them.
func TestApplyBeat(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	var j JobStatus
	Apply(&j, WireEvent{Type: EventRunStarted, Job: "j", RunID: "r1", StartedAt: t0, Time: t0})
	Apply(&j, WireEvent{Type: EventRunBeat, Job: "j", RunID: "r1", Time: t0.Add(time.Second), Progress: "1/3"})
	if j.Progress != "1/3" || !j.LastBeatAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("after a beat: %q at %v", j.Progress, j.LastBeatAt)
	}
	Apply(&j, WireEvent{Type: EventRunBeat, Job: "j", RunID: "r0", Time: t0.Add(2 * time.Second), Progress: "old"})
	if j.Progress != "1/3" {
		t.Errorf("another run's beat changed the progress to %q", j.Progress)
	}
	Apply(&j, WireEvent{Type: EventRunFinished, Job: "j", RunID: "r1", Time: t0.Add(3 * time.Second), Outcome: "ok"})
	if j.Progress != "" || !j.LastBeatAt.IsZero() {
		t.Errorf("after the end: %q at %v, want none", j.Progress, j.LastBeatAt)
	}
	Apply(&j, WireEvent{Type: EventRunStarted, Job: "j", RunID: "r2", StartedAt: t0, Time: t0})
	Apply(&j, WireEvent{Type: EventRunBeat, Job: "j", RunID: "r2", Time: t0, Progress: "x"})
	Apply(&j, WireEvent{Type: EventRunStarted, Job: "j", RunID: "r3", StartedAt: t0, Time: t0})
	if j.Progress != "" || !j.LastBeatAt.IsZero() {
		t.Errorf("after a new start: %q at %v, want none", j.Progress, j.LastBeatAt)
	}
}
