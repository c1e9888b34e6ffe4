package runner

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/base/run"
	"cronvisor/internal/base/schedule"
	"cronvisor/internal/config"
)

// recorder is a Firer and event sink that remembers what happened.
type recorder struct {
	mu     sync.Mutex
	fires  map[string][]time.Time
	ran    []config.Job // the definition of each fire
	skips  []run.Skip
	stalls []run.Stall
}

func newRecorder() *recorder { return &recorder{fires: map[string][]time.Time{}} }

func (r *recorder) Fire(_ context.Context, j config.Job, slot time.Time, _ bool) run.End {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fires[j.Name] = append(r.fires[j.Name], slot)
	r.ran = append(r.ran, j)
	return run.End{Job: j.Name, Slot: slot, Outcome: run.OK}
}

// Skip keeps a skip; the scheduler records skips here, not through emit.
func (r *recorder) Skip(ev run.Skip) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.skips = append(r.skips, ev)
}

func (r *recorder) emit(ev run.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e := ev.(type) {
	case run.Stall:
		r.stalls = append(r.stalls, e)
	}
}

func (r *recorder) stallsOf(name string) []run.Stall {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []run.Stall
	for _, s := range r.stalls {
		if s.Job == name {
			out = append(out, s)
		}
	}
	return out
}

func (r *recorder) firesOf(name string) []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.fires[name])
}

func (r *recorder) skipsOf(name string) []run.Skip {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []run.Skip
	for _, s := range r.skips {
		if s.Job == name {
			out = append(out, s)
		}
	}
	return out
}

func mustLoc(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func testJob(t testing.TB, name, expr, zone string) config.Job {
	t.Helper()
	loc := mustLoc(t, zone)
	s, err := schedule.Parse(expr, loc)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return config.Job{Name: name, Schedule: expr, Sched: s, Location: loc, Timezone: zone,
		Enabled: true, Overlap: config.OverlapSkip, Lock: name, Command: []string{"true"}}
}

// harness runs a Scheduler on a fake clock and steps it timer by timer.
type harness struct {
	t     *testing.T
	clock *clock.Fake
	rec   *recorder
	sched *Scheduler
	stop  context.CancelFunc
	done  chan struct{}
}

func startHarness(t *testing.T, start time.Time, jobs []config.Job, opts ...SchedulerOption) *harness {
	t.Helper()
	h := &harness{t: t, clock: clock.NewFake(start), rec: newRecorder(), done: make(chan struct{})}
	h.sched = NewScheduler(h.rec, h.clock, h.rec.emit, opts...)
	ctx, cancel := context.WithCancel(context.Background())
	h.stop = cancel
	armed := h.clock.TimerChanged()
	go func() { h.sched.Run(ctx, jobs); close(h.done) }()
	h.waitArmed(armed)
	t.Cleanup(h.close)
	return h
}

func (h *harness) close() {
	h.stop()
	<-h.done
	h.sched.WaitAll()
}

func (h *harness) waitArmed(ch <-chan struct{}) {
	h.t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		h.t.Fatal("scheduler did not re-arm its timer")
	}
}

// set moves the clock to t and waits until the loop has handled the
// wake-up and armed its timer again.
func (h *harness) set(t time.Time) {
	armed := h.clock.TimerChanged()
	h.clock.Set(t)
	h.waitArmed(armed)
}

// runUntil steps from timer to timer until end.
func (h *harness) runUntil(end time.Time) {
	for {
		d, ok := h.clock.NextDeadline()
		if !ok || d.After(end) {
			return
		}
		h.set(d)
	}
}

func TestSchedulerYearOfMixedSchedules(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.AddDate(1, 0, 0)
	jobs := []config.Job{
		testJob(t, "quarter_ny", "*/15 * * * *", "America/New_York"),
		testJob(t, "gap_ny", "30 2 * * *", "America/New_York"),
		testJob(t, "fold_ny", "30 1 * * *", "America/New_York"),
		testJob(t, "hourly_london", "0 * * * *", "Europe/London"),
		testJob(t, "lordhowe", "15 2 * * *", "Australia/Lord_Howe"),
		testJob(t, "every_7h", "@every 7h", "UTC"),
		testJob(t, "monthly_sh", "0 0 1 * *", "Asia/Shanghai"),
		testJob(t, "weekly", "@weekly", "Europe/London"),
	}
	h := startHarness(t, start, jobs, WithMaxSleep(365*24*time.Hour))
	h.runUntil(end)
	h.close()
	for _, j := range jobs {
		t.Run(j.Name, func(t *testing.T) {
			want := []time.Time{}
			for s := j.Sched.Next(start); !s.After(end); s = j.Sched.Next(s) {
				want = append(want, s)
			}
			got := h.rec.firesOf(j.Name)
			slices.SortFunc(got, time.Time.Compare) // runs are dispatched concurrently
			if len(got) != len(want) {
				t.Fatalf("fired %d times, schedule says %d", len(got), len(want))
			}
			for i := range want {
				if !got[i].Equal(want[i]) {
					t.Fatalf("fire %d: slot %s, want %s", i, got[i], want[i])
				}
			}
			if skips := h.rec.skipsOf(j.Name); len(skips) != 0 {
				t.Fatalf("unexpected skips: %+v", skips)
			}
		})
	}
	// Spot-check the DST days through the schedule package's own answers.
	ny := mustLoc(t, "America/New_York")
	gapDay := time.Date(2026, 3, 8, 0, 0, 0, 0, ny)
	n := 0
	for _, s := range h.rec.firesOf("gap_ny") {
		if s.In(ny).YearDay() == gapDay.YearDay() {
			n++
		}
	}
	if n != 1 {
		t.Errorf("gap_ny fired %d times on the spring-forward day, want 1", n)
	}
}

func TestSchedulerClockSteppedBackFiresNothingTwice(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 30, 0, time.UTC)
	j := testJob(t, "minutely", "* * * * *", "UTC")
	h := startHarness(t, start, []config.Job{j})
	h.runUntil(start.Add(3 * time.Minute)) // fires 10:01, 10:02, 10:03
	// NTP steps the clock back ten minutes: the pending timer still fires
	// after its duration (monotonic), and the loop then sees an earlier
	// wall time than the slot it waits for.
	h.clock.Step(-10 * time.Minute)
	h.runUntil(start.Add(5 * time.Minute))
	h.sched.WaitAll()
	got := h.rec.firesOf("minutely")
	slices.SortFunc(got, time.Time.Compare)
	want := []string{"10:01:00", "10:02:00", "10:03:00", "10:04:00", "10:05:00"}
	if len(got) != len(want) {
		t.Fatalf("fires %v, want %v", got, want)
	}
	for i, w := range want {
		if got[i].UTC().Format("15:04:05") != w {
			t.Errorf("fire %d at %s, want %s", i, got[i].UTC().Format("15:04:05"), w)
		}
	}
}

func TestSchedulerSuspendRecordsMissedFires(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 30, 0, time.UTC)
	tests := []struct {
		name       string
		catchUp    time.Duration
		resumeAt   time.Time
		wantFires  []string
		wantReason string
	}{
		{
			name:       "newest fire is recent: it runs, the rest are recorded",
			resumeAt:   time.Date(2026, 5, 1, 13, 0, 20, 0, time.UTC),
			wantFires:  []string{"13:00:00"},
			wantReason: "missed: supervisor woke late",
		},
		{
			name:       "newest fire too old: nothing runs, all recorded",
			resumeAt:   time.Date(2026, 5, 1, 13, 30, 0, 0, time.UTC),
			wantFires:  nil,
			wantReason: "missed: supervisor woke 30m0s late",
		},
		{
			name:       "catch_up widens the window",
			catchUp:    time.Hour,
			resumeAt:   time.Date(2026, 5, 1, 13, 30, 0, 0, time.UTC),
			wantFires:  []string{"13:00:00"},
			wantReason: "missed: supervisor woke late",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := testJob(t, "hourly", "0 * * * *", "UTC")
			j.CatchUp = tc.catchUp
			h := startHarness(t, start, []config.Job{j})
			h.set(tc.resumeAt)
			h.sched.WaitAll()
			var got []string
			for _, s := range h.rec.firesOf("hourly") {
				got = append(got, s.UTC().Format("15:04:05"))
			}
			if !slices.Equal(got, tc.wantFires) {
				t.Fatalf("fires %v, want %v", got, tc.wantFires)
			}
			skips := h.rec.skipsOf("hourly")
			if len(skips) != 1 || !strings.Contains(skips[0].Reason, tc.wantReason) {
				t.Fatalf("skips %+v, want one with %q", skips, tc.wantReason)
			}
			// The next fire after the wake-up is the next nominal slot.
			if d := h.sched.NextFires()["hourly"]; d.UTC().Format("15:04:05") != "14:00:00" {
				t.Errorf("next fire %s, want 14:00:00", d)
			}
		})
	}
}

func TestSchedulerCatchUpAfterDowntime(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 10, 0, 0, time.UTC)
	tests := []struct {
		name      string
		catchUp   time.Duration
		lastSlot  time.Time
		wantFires []string
		wantSkip  string
	}{
		{"no downtime", time.Hour, time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), nil, ""},
		{"newest missed within catch_up runs once", time.Hour, time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC), []string{"12:00:00"}, "missed while down (older than"},
		{"beyond catch_up is recorded", 5 * time.Minute, time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC), nil, "missed while down (beyond catch_up 5m0s)"},
		{"no catch_up: recorded", 0, time.Date(2026, 5, 1, 11, 0, 0, 0, time.UTC), nil, "missed while down (beyond catch_up 0s)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := testJob(t, "hourly", "0 * * * *", "UTC")
			j.CatchUp = tc.catchUp
			last := func(context.Context, []string) (map[string]time.Time, error) {
				return map[string]time.Time{"hourly": tc.lastSlot}, nil
			}
			h := startHarness(t, now, []config.Job{j}, WithLastSlots(last))
			h.sched.WaitAll()
			var got []string
			for _, s := range h.rec.firesOf("hourly") {
				got = append(got, s.UTC().Format("15:04:05"))
			}
			if !slices.Equal(got, tc.wantFires) {
				t.Fatalf("fires %v, want %v", got, tc.wantFires)
			}
			skips := h.rec.skipsOf("hourly")
			if tc.wantSkip == "" {
				if len(skips) != 0 {
					t.Fatalf("unexpected skips %+v", skips)
				}
				return
			}
			if len(skips) != 1 || !strings.Contains(skips[0].Reason, tc.wantSkip) {
				t.Fatalf("skips %+v, want one containing %q", skips, tc.wantSkip)
			}
		})
	}
}

func TestSchedulerDisabledJobRecordsEachFire(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 30, 0, time.UTC)
	j := testJob(t, "off", "* * * * *", "UTC")
	j.Enabled = false
	h := startHarness(t, start, []config.Job{j})
	h.runUntil(start.Add(3 * time.Minute))
	h.sched.WaitAll()
	if f := h.rec.firesOf("off"); len(f) != 0 {
		t.Fatalf("disabled job fired: %v", f)
	}
	skips := h.rec.skipsOf("off")
	if len(skips) != 3 {
		t.Fatalf("got %d skip records, want 3", len(skips))
	}
	for _, s := range skips {
		if s.Reason != "disabled" {
			t.Errorf("reason %q, want disabled", s.Reason)
		}
	}
	if _, listed := h.sched.NextFires()["off"]; listed {
		t.Error("a disabled job has no next fire")
	}
}

func TestSchedulerReload(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 30, 0, time.UTC)
	a := testJob(t, "a", "* * * * *", "UTC")
	b := testJob(t, "b", "*/2 * * * *", "UTC")
	h := startHarness(t, start, []config.Job{a})
	h.runUntil(start.Add(time.Minute)) // a at 10:01
	armed := h.clock.TimerChanged()
	h.sched.Reload(context.Background(), []config.Job{b})
	h.waitArmed(armed)
	h.runUntil(start.Add(5 * time.Minute))
	h.sched.WaitAll()
	if got := len(h.rec.firesOf("a")); got != 1 {
		t.Errorf("removed job a fired %d times, want 1", got)
	}
	// Each fire runs on its own goroutine (as a job's runs do), so the
	// recorder has them in the order they reached it, not by slot.
	fires := h.rec.firesOf("b")
	slices.SortFunc(fires, time.Time.Compare)
	var got []string
	for _, s := range fires {
		got = append(got, s.UTC().Format("15:04"))
	}
	if want := []string{"10:02", "10:04"}; !slices.Equal(got, want) {
		t.Errorf("added job b fired %v, want %v", got, want)
	}
}
