package runner

import (
	"slices"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/config"
)

// TestSchedulerRunsEveryFireOfADSTBurst: crond runs each fixed time inside
// a spring-forward gap right after the jump; the scheduler gets them as
// slots a nanosecond apart and must fire each, none recorded as missed.
func TestSchedulerRunsEveryFireOfADSTBurst(t *testing.T) {
	start := time.Date(2026, 3, 8, 6, 0, 0, 0, time.UTC) // 01:00 EST
	h := startHarness(t, start, []config.Job{testJob(t, "gap", "0,30 2 * * *", "America/New_York")})
	h.runUntil(start.Add(3 * time.Hour))
	h.sched.WaitAll()
	jump := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)
	got := h.rec.firesOf("gap")
	// Each fire runs on its own goroutine: they record in either order.
	slices.SortFunc(got, time.Time.Compare)
	want := []time.Time{jump, jump.Add(time.Nanosecond)}
	if len(got) != len(want) || !got[0].Equal(want[0]) || !got[1].Equal(want[1]) {
		t.Fatalf("fires %v, want %v", got, want)
	}
	if skips := h.rec.skipsOf("gap"); len(skips) != 0 {
		t.Fatalf("skips %+v, want none", skips)
	}
}

// stallingSchedule yields no next fire until it is told to.
type stallingSchedule struct {
	mu   sync.Mutex
	fire time.Time // zero: no next fire
}

func (s *stallingSchedule) Next(t time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fire.After(t) {
		return s.fire
	}
	return time.Time{}
}

func (s *stallingSchedule) set(t time.Time) {
	s.mu.Lock()
	s.fire = t
	s.mu.Unlock()
}

// TestSchedulerNeverParksAJobSilently: a job whose next fire cannot be
// computed is reported (event and Stalls), kept, and asked again.
func TestSchedulerNeverParksAJobSilently(t *testing.T) {
	start := time.Date(2028, 12, 31, 0, 0, 0, 0, time.UTC)
	sched := &stallingSchedule{}
	job := testJob(t, "stuck", "* * * * *", "UTC")
	job.Sched = sched
	h := startHarness(t, start, []config.Job{job})
	st, ok := h.sched.Stalls()["stuck"]
	if !ok || !st.After.Equal(start) || !st.Retry.Equal(start.Add(stallRetry)) {
		t.Fatalf("Stalls()[stuck] = %+v, %v; want one after %s, retried at %s", st, ok, start, start.Add(stallRetry))
	}
	if _, listed := h.sched.NextFires()["stuck"]; listed {
		t.Fatal("a stalled job is listed with a next fire")
	}
	h.set(start.Add(stallRetry)) // still nothing: reported again
	if n := len(h.rec.stallsOf("stuck")); n != 2 {
		t.Fatalf("%d stall events after the first retry, want 2", n)
	}
	fire := start.Add(2*stallRetry + 30*time.Minute)
	sched.set(fire)
	h.set(start.Add(2 * stallRetry)) // the retry finds the fire
	if _, still := h.sched.Stalls()["stuck"]; still {
		t.Fatal("still listed as stalled after a fire was found")
	}
	if next := h.sched.NextFires()["stuck"]; !next.Equal(fire) {
		t.Fatalf("next fire %s, want %s", next, fire)
	}
}
