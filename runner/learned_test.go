package runner

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/base/durations"
	"cronvisor/internal/base/run"
	"cronvisor/internal/store/history"
)

// seedRuns records n ok runs of job in store, 10 s ± 1 s (uniform, a
// fixed seed), the newest ending a minute before now.
func seedRuns(t *testing.T, store *history.Store, job string, n int, now time.Time) {
	t.Helper()
	rng := rand.New(rand.NewPCG(42, uint64(n)))
	for i := range n {
		ended := now.Add(-time.Duration(n-i) * time.Minute)
		took := 9*time.Second + time.Duration(rng.Int64N(int64(2*time.Second)))
		r := run.Record{Job: job, RunID: run.NewID(ended), Outcome: run.OK, ScheduledAt: ended.Add(-took),
			StartedAt: ended.Add(-took), EndedAt: ended, Attempt: 1}
		if err := store.Finish(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLearnedSlowAndFast is issue 42's check on a fake clock and a real
// store: 50 runs of 10 s ± 1 s give a p99 within 5 % of the true one; a
// run of 60 s under warn_after: auto raises exactly one slow whose
// reason names the bound's source; an ok run of 0.2 s under warn_fast:
// auto raises exactly one fast; with 9 runs, neither is raised.
func TestLearnedSlowAndFast(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	fc := clock.NewFake(now)
	store, err := history.Open(filepath.Join(dir, "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	seedRuns(t, store, "learned", 50, now)
	seedRuns(t, store, "few-slow", 9, now)
	seedRuns(t, store, "few-fast", 9, now) // each run joins its job's window: one job a check
	learner := durations.NewLearner(durations.LearnerConfig{Source: store, Now: fc.Now,
		Fast: func(string) durations.FastRule { return durations.FastRule{Learned: true} }})
	st, err := learner.Stats(context.Background(), "learned")
	const trueP99 = 9*time.Second + 1980*time.Millisecond // of the uniform 9..11 s
	if err != nil || st.Runs != 50 || st.P99 < trueP99*95/100 || st.P99 > trueP99*105/100 {
		t.Fatalf("stats %+v (%v): p99 not within 5%% of %v", st, err, trueP99)
	}
	s, ev := newTestSupervisor(t, dir, WithClock(fc), WithLearner(learner))

	for _, tc := range []struct {
		job        string
		took       time.Duration
		slow, fast int
		reason     string
	}{
		{"learned", 60 * time.Second, 1, 0, "running 22s; p99 of the last 50 runs is " + durations.Round(st.P99).String()},
		{"learned", 200 * time.Millisecond, 0, 1, "; p5 of the last 50 runs is " + durations.Round(st.P5).String()},
		{"few-slow", 60 * time.Second, 0, 0, ""},
		{"few-fast", 200 * time.Millisecond, 0, 0, ""},
	} {
		gate := filepath.Join(t.TempDir(), "gate")
		j := shJob(tc.job, `while [ ! -e "$GATE" ]; do sleep 0.005; done`)
		j.Env = map[string]string{"GATE": gate}
		j.Timeout, j.WarnAfterLearned, j.WarnFastLearned = 10*time.Minute, true, true
		ev.mu.Lock()
		ev.all = nil
		ev.mu.Unlock()
		done := fireAsync(s, j, fc.Now())
		waitRunning(t, s, ev, tc.job)
		// The slow watcher's timer, when the job learns a bound, is set
		// before the process starts: advancing now passes it.
		for step := time.Duration(0); step < tc.took; step += time.Second {
			fc.Advance(min(time.Second, tc.took-step))
		}
		if err := os.WriteFile(gate, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		end := <-done
		if end.Outcome != run.OK {
			t.Fatalf("%s: %+v", tc.job, end)
		}
		ev.mu.Lock()
		var slow, fast []string
		for _, e := range ev.all {
			switch e := e.(type) {
			case run.Slow:
				slow = append(slow, e.Reason)
			case run.Fast:
				fast = append(fast, e.Reason)
			}
		}
		ev.mu.Unlock()
		if len(slow) != tc.slow || len(fast) != tc.fast {
			t.Errorf("%s taking %v: slow %q, fast %q; want %d and %d", tc.job, tc.took, slow, fast, tc.slow, tc.fast)
			continue
		}
		for _, r := range append(slow, fast...) {
			if !strings.Contains(r, tc.reason) {
				t.Errorf("%s taking %v: reason %q, want it to hold %q", tc.job, tc.took, r, tc.reason)
			}
		}
	}
}
