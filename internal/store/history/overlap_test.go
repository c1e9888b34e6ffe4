package history

import (
	"reflect"
	"testing"

	"cronvisor/internal/base/run"
)

func TestOverlaps(t *testing.T) {
	s, _ := openTemp(t)
	ctx := testCtx(t)
	holder := func(pid int, job, runID string) *run.Holder {
		return &run.Holder{PID: pid, Host: "h", Job: job, RunID: runID, Since: minute(0)}
	}
	// r1 (job a) held the lock over three fires of a and one of b, which
	// shares its lock; flock(1) as pid 77 blocked two fires; a pruned run
	// blocked one; a skip without a holder is no overlap.
	mustRun(t, s, run.Record{Job: "a", RunID: "r1", Outcome: run.OK, ScheduledAt: minute(0),
		StartedAt: minute(0), EndedAt: minute(4), PID: 10, Host: "h"})
	for _, r := range []run.Record{
		{Job: "a", RunID: "s1", ScheduledAt: minute(1), Holder: holder(10, "a", "r1")},
		{Job: "b", RunID: "s2", ScheduledAt: minute(2), Holder: holder(10, "a", "r1")},
		{Job: "a", RunID: "s3", ScheduledAt: minute(3), Holder: holder(10, "a", "r1")},
		{Job: "a", RunID: "f1", ScheduledAt: minute(5), Holder: holder(77, "", "")},
		{Job: "a", RunID: "f2", ScheduledAt: minute(6), Holder: holder(77, "", "")},
		{Job: "a", RunID: "g1", ScheduledAt: minute(7), Holder: holder(88, "a", "gone")},
		{Job: "a", RunID: "n1", ScheduledAt: minute(8), Reason: "slot already run"},
	} {
		mustSkip(t, s, r)
	}
	type group struct {
		Run       string
		Synthetic bool
		PID       int
		Skips     []string
	}
	tests := []struct {
		name string
		f    Filter
		want []group
	}{
		{"all", Filter{}, []group{
			{"gone", true, 88, []string{"g1"}},
			{"", true, 77, []string{"f2", "f1"}},
			{"r1", false, 10, []string{"s3", "s2", "s1"}},
		}},
		{"skips of job b", Filter{Job: "b"}, []group{{"r1", false, 10, []string{"s2"}}}},
		{"since", Filter{Since: minute(6), Outcomes: []run.Outcome{run.OK}}, []group{
			{"gone", true, 88, []string{"g1"}},
			{"", true, 77, []string{"f2"}},
		}},
		{"none", Filter{Job: "zzz"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Overlaps(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			var gs []group
			for _, o := range got {
				gs = append(gs, group{o.Run.RunID, o.Synthetic, o.Run.PID, runIDs(o.Skips)})
			}
			if !reflect.DeepEqual(gs, tc.want) {
				t.Errorf("Overlaps = %+v\nwant %+v", gs, tc.want)
			}
		})
	}
	t.Run("known run is the stored record", func(t *testing.T) {
		got, _ := s.Overlaps(ctx, Filter{Job: "b"})
		if len(got) != 1 || got[0].Run.Outcome != run.OK || !got[0].Run.EndedAt.Equal(minute(4)) {
			t.Errorf("Run = %+v", got)
		}
	})
}
