package history

import (
	"testing"

	"cronvisor/run"
)

// TestEndRetriesNotesTheSlotsEndOnce: the note goes on a final row once
// (a second recoverer changes nothing); an open row and a missing one are
// left alone.
func TestEndRetriesNotesTheSlotsEndOnce(t *testing.T) {
	s, _ := openTemp(t)
	ctx := testCtx(t)
	mustRun(t, s, run.Record{Job: "a", RunID: "r1", Outcome: run.Failed, ScheduledAt: minute(0), StartedAt: minute(0),
		EndedAt: minute(1), ExitCode: intp(3), Reason: "exit 3: boom", Attempt: 1})
	mustRun(t, s, run.Record{Job: "a", RunID: "r2", Outcome: run.Timeout, ScheduledAt: minute(2), StartedAt: minute(2), EndedAt: minute(3), Attempt: 1})
	if err := s.Start(ctx, run.Record{Job: "a", RunID: "r3", ScheduledAt: minute(4), StartedAt: minute(4), Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		runID, want string
		changed     bool
	}{
		{"r1", "exit 3: boom; no retry: gone", true},
		{"r1", "exit 3: boom; no retry: gone", false},
		{"r2", "no retry: gone", true},
		{"r3", "", false},
		{"absent", "", false},
	} {
		r, changed, err := s.EndRetries(ctx, tc.runID, "no retry: gone")
		if err != nil || changed != tc.changed || r.Reason != tc.want {
			t.Errorf("EndRetries(%s) = %q, %v, %v; want %q, %v", tc.runID, r.Reason, changed, err, tc.want, tc.changed)
		}
	}
}
