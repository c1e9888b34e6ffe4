package history

import (
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// TestOldest: the oldest record's slot, else its start, of any job; zero
// for an empty store.
func TestOldest(t *testing.T) {
	tests := []struct {
		name string
		recs []run.Record
		want time.Time
	}{
		{"empty", nil, time.Time{}},
		{"a slot", []run.Record{
			{Job: "b", RunID: "b1", Outcome: run.OK, ScheduledAt: minute(5), StartedAt: minute(5), EndedAt: minute(6)},
			{Job: "a", RunID: "a1", Outcome: run.Skipped, ScheduledAt: minute(2), EndedAt: minute(2)},
		}, minute(2)},
		{"a manual run's start", []run.Record{
			{Job: "a", RunID: "a1", Outcome: run.OK, ScheduledAt: minute(5), StartedAt: minute(5), EndedAt: minute(6)},
			{Job: "m", RunID: "m1", Outcome: run.OK, StartedAt: minute(1), EndedAt: minute(3), Manual: true},
		}, minute(1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTemp(t)
			for _, r := range tc.recs {
				mustRun(t, s, r)
			}
			got, err := s.Oldest(testCtx(t))
			if err != nil || !got.Equal(tc.want) {
				t.Errorf("Oldest = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
