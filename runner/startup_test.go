package runner

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/config"
)

// TestSchedulerStartUpAsksOnceForAllJobs checks that start-up looks up
// every scheduled job's last slot in one call and catches each job up
// from its own answer, as the per-job lookup did.
func TestSchedulerStartUpAsksOnceForAllJobs(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 10, 0, 0, time.UTC)
	at := func(h int) time.Time { return time.Date(2026, 5, 1, h, 0, 0, 0, time.UTC) }
	tests := []struct {
		name      string
		answer    map[string]time.Time
		err       error
		wantFires []string // jobs whose missed 12:00 fire runs
		wantSkips []string // jobs with a "missed while down" record
	}{
		{"each job from its own slot", map[string]time.Time{"late": at(9), "current": at(12), "nocatch": at(11)},
			nil, []string{"late"}, []string{"late", "nocatch"}},
		{"jobs without a slot: nothing to catch up", map[string]time.Time{}, nil, nil, nil},
		{"lookup failed: nothing to catch up", nil, errors.New("store down"), nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var calls [][]string
			lookup := func(_ context.Context, jobs []string) (map[string]time.Time, error) {
				mu.Lock()
				defer mu.Unlock()
				calls = append(calls, slices.Clone(jobs))
				return tc.answer, tc.err
			}
			var jobs []config.Job
			for _, name := range []string{"late", "current", "nocatch"} {
				j := testJob(t, name, "0 * * * *", "UTC")
				if name != "nocatch" {
					j.CatchUp = 6 * time.Hour
				}
				jobs = append(jobs, j)
			}
			jobs = append(jobs, config.Job{Name: "unscheduled", Enabled: true}) // no Sched: not asked for
			h := startHarness(t, now, jobs, WithLastSlots(lookup))
			h.sched.WaitAll()
			mu.Lock()
			defer mu.Unlock()
			if want := [][]string{{"late", "current", "nocatch"}}; !slices.EqualFunc(calls, want, slices.Equal) {
				t.Errorf("lookups %v, want %v", calls, want)
			}
			var fired, skipped []string
			for _, j := range jobs {
				if len(h.rec.firesOf(j.Name)) > 0 {
					fired = append(fired, j.Name)
				}
				if len(h.rec.skipsOf(j.Name)) > 0 {
					skipped = append(skipped, j.Name)
				}
			}
			if !slices.Equal(fired, tc.wantFires) || !slices.Equal(skipped, tc.wantSkips) {
				t.Errorf("fired %v, skipped %v; want %v, %v", fired, skipped, tc.wantFires, tc.wantSkips)
			}
		})
	}
}
