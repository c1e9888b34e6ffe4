package history

import (
	"testing"

	"cronvisor/internal/base/run"
)

// TestAmendRestatesTheSlotsEndOnce: an Amends end restates a final row's
// reason once (a second recoverer changes nothing); an open row and a
// missing one are left alone.
func TestAmendRestatesTheSlotsEndOnce(t *testing.T) {
	s, _ := openTemp(t)
	ctx := testCtx(t)
	mustRun(t, s, run.Record{Job: "a", RunID: "r1", Outcome: run.Failed, ScheduledAt: minute(0), StartedAt: minute(0),
		EndedAt: minute(1), ExitCode: intp(3), Reason: "exit 3: boom", Attempt: 1})
	if err := s.Start(ctx, run.Record{Job: "a", RunID: "r3", ScheduledAt: minute(4), StartedAt: minute(4), Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		runID, reason string
		changed       bool
	}{
		{"r1", "exit 3: boom; no retry: gone", true},
		{"r1", "exit 3: boom; no retry: gone", false},
		{"r3", "no retry: gone", false},
		{"absent", "no retry: gone", false},
	} {
		changed, err := s.WriteEnd(ctx, run.End{RunID: tc.runID, Reason: tc.reason, Amends: true})
		if err != nil || changed != tc.changed {
			t.Errorf("WriteEnd(%s amends) = %v, %v; want %v", tc.runID, changed, err, tc.changed)
		}
	}
	r, ok, err := s.Record(ctx, "r1")
	if err != nil || !ok || r.Reason != "exit 3: boom; no retry: gone" || r.Outcome != run.Failed {
		t.Errorf("r1 = %+v, %v, %v; want failed with the note once", r, ok, err)
	}
	if r, _, _ := s.Record(ctx, "r3"); r.Outcome != run.Running || r.Reason != "" {
		t.Errorf("open r3 = %+v; want left alone", r)
	}
}
