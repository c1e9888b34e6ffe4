package ui

import (
	"strings"
	"testing"
	"time"

	"cronvisor/internal/ctl"
)

// TestAdoptedRunSaysSo: a run a dead supervisor left to its keeper is shown
// running, with its pid and that supervisor's.
func TestAdoptedRunSaysSo(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	j := ctl.JobStatus{Name: "sync", State: ctl.StateRunning, PID: 4242, StartedAt: at,
		Adopted: true, SupervisorPID: 1937}
	got := nowText(j, at.Add(36*time.Second))
	for _, want := range []string{"running pid 4242", "adopted", "pid 1937"} {
		if !strings.Contains(got, want) {
			t.Errorf("nowText = %q, want %q in it", got, want)
		}
	}
	j.Adopted = false
	if got := nowText(j, at); strings.Contains(got, "adopted") {
		t.Errorf("own run shown as %q", got)
	}
}
