package runner

import (
	"testing"
	"time"

	"cronvisor/internal/config"
)

// TestNextFireIsNextFiresEntry: NextFire answers for one job what
// NextFires lists for it, and nothing for a job it does not schedule.
func TestNextFireIsNextFiresEntry(t *testing.T) {
	start := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := startHarness(t, start, []config.Job{testJob(t, "hourly", "0 * * * *", "UTC")})
	for _, tc := range []struct {
		job    string
		want   time.Time
		listed bool
	}{
		{"hourly", time.Date(2026, 6, 1, 13, 0, 0, 0, time.UTC), true},
		{"absent", time.Time{}, false},
	} {
		t.Run(tc.job, func(t *testing.T) {
			got, ok := h.sched.NextFire(tc.job)
			listed, inAll := h.sched.NextFires()[tc.job]
			if ok != tc.listed || !got.Equal(tc.want) || ok != inAll || !got.Equal(listed) {
				t.Fatalf("NextFire(%q) = %s, %v; NextFires has %s, %v; want %s, %v", tc.job, got, ok, listed, inAll, tc.want, tc.listed)
			}
		})
	}
}
