package cli

import (
	"bytes"
	"testing"
	"time"

	"cronvisor/internal/ctl"
)

// TestPrintProgress: a line under the status table per running job that
// beat, with its progress and how long ago; none for the others.
func TestPrintProgress(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	jobs := []ctl.JobStatus{
		{Name: "reindex", State: ctl.StateRunning, Progress: "3/10", LastBeatAt: now.Add(-2 * time.Second)},
		{Name: "bare", State: ctl.StateRunning, LastBeatAt: now.Add(-5 * time.Second)},
		{Name: "silent", State: ctl.StateRunning},
		{Name: "idle", State: ctl.StateIdle, Progress: "stale", LastBeatAt: now},
	}
	var out bytes.Buffer
	printProgress(&globals{stdout: &out}, jobs, now)
	want := "reindex: progress 3/10 (beat 2s ago)\nbare: last beat 5s ago\n"
	if out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}
