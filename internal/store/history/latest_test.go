package history

import (
	"testing"

	"cronvisor/internal/base/run"
)

// TestSummariesPassOverSkips: the newest record of a job that ran and
// was then skipped is the skip; its last start is the run's before.
func TestSummariesPassOverSkips(t *testing.T) {
	s, _ := openTemp(t)
	ctx := testCtx(t)
	mustRun(t, s, run.Record{Job: "a", RunID: "run1", Outcome: run.OK, ScheduledAt: minute(0), StartedAt: minute(0), EndedAt: minute(1)})
	mustRun(t, s, run.Record{Job: "a", RunID: "run2", Outcome: run.Failed, ScheduledAt: minute(5), StartedAt: minute(5), EndedAt: minute(6)})
	mustSkip(t, s, run.Record{Job: "a", RunID: "skip1", Outcome: run.Skipped, ScheduledAt: minute(10)})
	mustSkip(t, s, run.Record{Job: "a", RunID: "skip2", Outcome: run.Skipped, ScheduledAt: minute(15)})
	mustSkip(t, s, run.Record{Job: "only_skips", RunID: "skip3", Outcome: run.Skipped, ScheduledAt: minute(15)})

	sums, err := s.Summaries(ctx, []string{"a", "only_skips", "unknown"})
	if err != nil {
		t.Fatal(err)
	}
	if got := sums["a"]; got.Outcome != run.Skipped || !got.StartedAt.Equal(minute(5)) || !got.EndedAt.IsZero() {
		t.Errorf("Summaries[a] = %+v, want the skip's outcome, no end, run2's start %v", got, minute(5))
	}
	if got, ok := sums["only_skips"]; !ok || !got.StartedAt.IsZero() || got.Outcome != run.Skipped {
		t.Errorf("Summaries[only_skips] = %+v (present %v), want a skip that never started", got, ok)
	}
	if len(sums) != 2 {
		t.Errorf("Summaries returned %d jobs, want 2", len(sums))
	}
}
