package history

import (
	"testing"

	"cronvisor/internal/base/run"
)

// TestBatchedQueriesMatchPerJob checks Summaries against the
// per-job queries they replace at start-up, on rows that exercise their
// filters: manual runs, rows without a slot, ties on "at", running rows.
func TestBatchedQueriesMatchPerJob(t *testing.T) {
	s, _ := openTemp(t)
	ctx := testCtx(t)
	for _, r := range []run.Record{
		{Job: "a", RunID: "1", Outcome: run.OK, ScheduledAt: minute(0)},
		{Job: "a", RunID: "2", Outcome: run.Skipped, ScheduledAt: minute(10)},
		{Job: "a", RunID: "3", Outcome: run.OK, ScheduledAt: minute(12), Manual: true},
		{Job: "b", RunID: "4", Outcome: run.OK, ScheduledAt: minute(1), Manual: true},
		{Job: "c", RunID: "5", Outcome: run.Error, StartedAt: minute(1)}, // no slot
		{Job: "d", RunID: "6", Outcome: run.OK, ScheduledAt: minute(3)},
		{Job: "d", RunID: "7", Outcome: run.Failed, ScheduledAt: minute(3)}, // same at: newest id wins
	} {
		mustSkip(t, s, r)
	}
	if err := s.Start(ctx, run.Record{Job: "e", RunID: "8", ScheduledAt: minute(4), StartedAt: minute(4)}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		jobs []string
	}{
		{"none", nil},
		{"one", []string{"a"}},
		{"mixed, unknown and repeated names", []string{"a", "b", "c", "d", "e", "zzz", "a"}},
		{"names that need quoting", []string{`x"y`, `back\slash`, "ünï"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sums, err := s.Summaries(ctx, tc.jobs)
			if err != nil {
				t.Fatal(err)
			}
			for _, job := range tc.jobs {
				want, err := s.LastSlot(ctx, job)
				if err != nil {
					t.Fatal(err)
				}
				if got := sums[job].LastSlot; !got.Equal(want) {
					t.Errorf("Summaries[%s].LastSlot = %v, want %v", job, got, want)
				}
				recs, err := s.Query(ctx, Filter{Job: job})
				if err != nil {
					t.Fatal(err)
				}
				got, ok := sums[job]
				if ok != (len(recs) > 0) {
					t.Errorf("Summaries[%s] present %v, Query found %d", job, ok, len(recs))
					continue
				}
				if !ok {
					continue
				}
				wantSum := Summary{Outcome: recs[0].Outcome, EndedAt: recs[0].EndedAt, LastSlot: want}
				for _, r := range recs {
					if !r.StartedAt.IsZero() {
						wantSum.StartedAt = r.StartedAt
						break
					}
				}
				if got.Outcome != wantSum.Outcome || !got.EndedAt.Equal(wantSum.EndedAt) || !got.StartedAt.Equal(wantSum.StartedAt) || !got.LastSlot.Equal(wantSum.LastSlot) {
					t.Errorf("Summaries[%s] = %+v, want %+v (from Query)", job, got, wantSum)
				}
			}
			asked := map[string]bool{}
			for _, j := range tc.jobs {
				asked[j] = true
			}
			for j := range sums {
				if !asked[j] {
					t.Errorf("Summaries returned job %q, not asked for", j)
				}
			}
		})
	}
}
