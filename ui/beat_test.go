package ui

import (
	"strings"
	"testing"
	"time"

	"cronvisor/internal/ctl"
)

// TestRunTextShowsTheNewestBeat: the detail's run line carries the
// running job's progress and how long ago it beat, or nothing before its
// first beat.
func TestRunTextShowsTheNewestBeat(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	running := ctl.JobStatus{State: ctl.StateRunning, RunID: "r1", PID: 42, StartedAt: now.Add(-time.Minute)}
	for _, c := range []struct {
		name     string
		progress string
		beat     time.Time
		want     string
	}{
		{"progress", "3/10 files", now.Add(-2 * time.Second), "progress 3/10 files (beat 2s ago)"},
		{"bare beat", "", now.Add(-5 * time.Second), "beat 5s ago"},
		{"no beat yet", "", time.Time{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := running
			j.Progress, j.LastBeatAt = c.progress, c.beat
			got := runText(j, now)
			if c.want == "" {
				if strings.Contains(got, "beat") || strings.Contains(got, "progress") {
					t.Errorf("runText = %q, want no beat before the first", got)
				}
				return
			}
			if !strings.Contains(got, " · "+c.want) {
				t.Errorf("runText = %q, want it to say %q", got, c.want)
			}
		})
	}
}
