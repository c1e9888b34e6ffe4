package cli

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"cronvisor/internal/ctl"
)

func TestDropOverlap(t *testing.T) {
	tests := []struct {
		name              string
		saved, live, want []string
	}{
		{"no saved log", nil, []string{"a"}, []string{"a"}},
		{"nothing live", []string{"a"}, nil, nil},
		{"disjoint", []string{"a", "b"}, []string{"c"}, []string{"c"}},
		{"the saved end repeats", []string{"a", "b", "c"}, []string{"b", "c", "d"}, []string{"d"}},
		{"all live lines saved", []string{"a", "b"}, []string{"a", "b"}, []string{}},
		{"repeated lines: the longest overlap", []string{"x", "x", "x"}, []string{"x", "x", "y"}, []string{"y"}},
		{"a saved line inside, not at the end", []string{"a", "b", "c"}, []string{"b", "d"}, []string{"b", "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := dropOverlap(tt.saved, tt.live); !slices.Equal(got, tt.want) {
				t.Errorf("dropOverlap(%q, %q) = %q, want %q", tt.saved, tt.live, got, tt.want)
			}
		})
	}
}

// TestNextRunSaysWaitsAndSkips: while logs -f waits for a job's next
// run, a fire of it waiting for a resource's slot is said on stderr, and
// its giving up; other skips and other jobs' events are not; the run
// that starts is followed.
func TestNextRunSaysWaitsAndSkips(t *testing.T) {
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	events := make(chan ctl.WireEvent, 6)
	events <- ctl.WireEvent{Type: ctl.EventRunWaiting, Job: "other", RunID: "o1", Resource: "db", Held: 2, Size: 2}
	events <- ctl.WireEvent{Type: ctl.EventRunSkipped, Job: "patient", RunID: "p0", Reason: "lock held by pid 1"}
	events <- ctl.WireEvent{Type: ctl.EventRunWaiting, Job: "patient", RunID: "p1", Resource: "db", Held: 2, Size: 2, Until: at}
	events <- ctl.WireEvent{Type: ctl.EventRunSkipped, Job: "patient", RunID: "p1", Reason: "resource db full after waiting 1m0s"}
	events <- ctl.WireEvent{Type: ctl.EventRunStarted, Job: "patient", RunID: "p2"}
	close(events)
	var errb bytes.Buffer
	got, err := nextRun(&globals{stderr: &errb}, events, "patient")
	if err != nil || got != "p2" {
		t.Fatalf("nextRun = %q, %v; want p2", got, err)
	}
	want := "(run p1 is waiting for db (2/2 held); it gives up at " + shortTime(at) + ")\n" +
		"(run p1 skipped: resource db full after waiting 1m0s; waiting for the next one)\n"
	if errb.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", errb.String(), want)
	}
}
