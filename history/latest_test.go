package history

import (
	"testing"

	"cronvisor/run"
)

// TestLatestRunsPassesOverSkips: the newest record of a job that ran and
// was then skipped is the skip; its newest run is the run before.
func TestLatestRunsPassesOverSkips(t *testing.T) {
	s, _ := openTemp(t)
	ctx := testCtx(t)
	mustRun(t, s, Record{Job: "a", RunID: "run1", Outcome: run.OK, ScheduledAt: minute(0), StartedAt: minute(0), EndedAt: minute(1)})
	mustRun(t, s, Record{Job: "a", RunID: "run2", Outcome: run.Failed, ScheduledAt: minute(5), StartedAt: minute(5), EndedAt: minute(6)})
	mustSkip(t, s, Record{Job: "a", RunID: "skip1", Outcome: run.Skipped, ScheduledAt: minute(10)})
	mustSkip(t, s, Record{Job: "a", RunID: "skip2", Outcome: run.Skipped, ScheduledAt: minute(15)})
	mustSkip(t, s, Record{Job: "only_skips", RunID: "skip3", Outcome: run.Skipped, ScheduledAt: minute(15)})

	runs, err := s.LatestRuns(ctx, []string{"a", "only_skips", "unknown"})
	if err != nil {
		t.Fatal(err)
	}
	if got := runs["a"]; got.RunID != "run2" || !got.StartedAt.Equal(minute(5)) {
		t.Errorf("LatestRuns[a] = %s started %v, want run2 started %v", got.RunID, got.StartedAt, minute(5))
	}
	if r, ok := runs["only_skips"]; ok {
		t.Errorf("LatestRuns[only_skips] = %s, want absent: it never ran", r.RunID)
	}
	if len(runs) != 1 {
		t.Errorf("LatestRuns returned %d jobs, want 1", len(runs))
	}
	latest, err := s.Latest(ctx, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	if latest["a"].RunID != "skip2" {
		t.Errorf("Latest[a] = %s, want the newest record skip2", latest["a"].RunID)
	}
}
