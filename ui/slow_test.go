package ui

import (
	"strings"
	"testing"
	"time"

	"cronvisor/internal/ctl"
)

// TestSlowRunIsMarked: a run_slow event marks the job's running row until
// the run ends; a retry's attempt number shows beside it.
func TestSlowRunIsMarked(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := newStore()
	s.setJobs([]ctl.JobStatus{{Name: "a", State: ctl.StateIdle}})
	s.apply(ctl.WireEvent{Type: ctl.EventRunStarted, Job: "a", RunID: "r2", Time: at, StartedAt: at, PID: 7, Attempt: 2})
	row := func() string { return nowText(s.at(0), at.Add(time.Minute)) }
	if got := row(); !strings.Contains(got, "attempt 2") || strings.Contains(got, "SLOW") {
		t.Errorf("before warn_after: %q", got)
	}
	s.apply(ctl.WireEvent{Type: ctl.EventRunSlow, Job: "a", RunID: "other", Time: at})
	if strings.Contains(row(), "SLOW") {
		t.Errorf("another run's run_slow marked this one: %q", row())
	}
	s.apply(ctl.WireEvent{Type: ctl.EventRunSlow, Job: "a", RunID: "r2", Time: at.Add(30 * time.Second)})
	if got := row(); !strings.Contains(got, "SLOW (past warn_after)") {
		t.Errorf("after run_slow: %q", got)
	}
	s.apply(ctl.WireEvent{Type: ctl.EventRunFinished, Job: "a", RunID: "r2", Time: at.Add(time.Minute), StartedAt: at, Outcome: "ok"})
	if j := s.at(0); j.Slow || j.Attempt != 0 {
		t.Errorf("after the run: %+v", j)
	}
}
