package runner

import (
	"slices"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/config"
)

// settler stands in for nanosleep: it advances the fake clock and
// remembers each sleep and how many fires had happened before it.
type settler struct {
	mu     sync.Mutex
	clock  *clock.Fake // clock and rec are set once the harness exists
	rec    *recorder
	sleeps []time.Duration
	before []int // fires recorded when each sleep began
}

func (s *settler) settle(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sleeps = append(s.sleeps, d)
	s.before = append(s.before, len(s.rec.firesOf("tick")))
	s.clock.Advance(d)
}

func (s *settler) got() (sleeps []time.Duration, before []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sleeps), slices.Clone(s.before)
}

// TestSchedulerWakesEarlyAndSettles checks the precise wake-up: the timer
// is armed lead before the fire, the rest is slept by settle, and the fire
// happens after the sleep, never before its slot.
func TestSchedulerWakesEarlyAndSettles(t *testing.T) {
	const lead = 2 * time.Millisecond
	start := time.Date(2026, 6, 1, 12, 0, 0, 500_000_000, time.UTC)
	slot := func(sec int) time.Time { return time.Date(2026, 6, 1, 12, 0, sec, 0, time.UTC) }
	tests := []struct {
		name       string
		wake       time.Time // where the test moves the clock after start
		wantSleeps []time.Duration
		wantFires  []time.Time
	}{
		{"timer on time: sleeps the lead", slot(1).Add(-lead), []time.Duration{lead}, []time.Time{slot(1)}},
		{"timer a little late: sleeps the rest", slot(1).Add(-lead / 4), []time.Duration{lead / 4}, []time.Time{slot(1)}},
		{"timer past the slot: fires at once", slot(1).Add(time.Millisecond), nil, []time.Time{slot(1)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &settler{}
			h := startHarness(t, start, []config.Job{testJob(t, "tick", "* * * * * *", "UTC")},
				func(s *Scheduler) { s.settle, s.lead = st.settle, lead })
			st.mu.Lock()
			st.clock, st.rec = h.clock, h.rec
			st.mu.Unlock()
			if d, _ := h.clock.NextDeadline(); !d.Equal(slot(1).Add(-lead)) {
				t.Fatalf("timer armed for %v, want %v", d, slot(1).Add(-lead))
			}
			h.set(tc.wake)
			h.close()
			sleeps, before := st.got()
			if !slices.Equal(sleeps, tc.wantSleeps) {
				t.Errorf("settle slept %v, want %v", sleeps, tc.wantSleeps)
			}
			if slices.ContainsFunc(before, func(n int) bool { return n > 0 }) {
				t.Errorf("fires before the settle sleep: %v", before)
			}
			if got := h.rec.firesOf("tick"); !slices.EqualFunc(got, tc.wantFires, time.Time.Equal) {
				t.Errorf("fires %v, want %v", got, tc.wantFires)
			}
		})
	}
}
