package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/base/run"
	"cronvisor/internal/base/schedule"
	"cronvisor/internal/config"
	"cronvisor/internal/harness/testlog"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/file"
)

// failTwice fails its first two runs (counted in a file of dir), then
// succeeds, printing CRONVISOR_ATTEMPT each time.
func failTwice(dir string) config.Job {
	j := shJob("flaky", `echo "attempt $CRONVISOR_ATTEMPT"; echo x >> `+filepath.Join(dir, "n")+`; test $(wc -l < `+filepath.Join(dir, "n")+`) -ge 3`)
	j.Retries, j.RetryBackoff, j.RetryBackoffMax, j.RetryOn = 2, 20*time.Millisecond, time.Second, config.DefaultRetryOn
	return j
}

func finishes(ev *events) []run.End {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	var out []run.End
	for _, e := range ev.all {
		if f, ok := e.(run.End); ok {
			out = append(out, f)
		}
	}
	return out
}

func TestRetriesInOneSlotUnderOneLock(t *testing.T) {
	dir := t.TempDir()
	locker := file.NewLocker(filepath.Join(dir, "locks"), InRun)
	other, otherEv := newTestSupervisor(t, dir)
	j := failTwice(dir)
	ev := &events{}
	var between []string // what the other supervisor's fires did between attempts
	s := NewSupervisor(locker, NopRecorder{}, func(e run.Event) {
		ev.emit(e)
		switch e := e.(type) {
		case run.End:
			if e.Retrying {
				// The lease is still held here: another supervisor's fire of
				// the same slot is refused.
				f := other.Fire(context.Background(), j, slotAt(0), false)
				between = append(between, string(f.Outcome)+": "+f.Reason)
			}
		case run.Start:
			if e.Attempt > 1 {
				st, err := locker.Inspect(context.Background(), j.Lock)
				if err != nil || st.Record.RunID != e.RunID {
					t.Errorf("attempt %d: lock names run %q (%v), want %q", e.Attempt, st.Record.RunID, err, e.RunID)
				}
			}
		}
	})
	f := s.Fire(context.Background(), j, slotAt(0), false)
	if f.Outcome != run.OK || f.Attempt != 3 {
		t.Fatalf("slot ended %s at attempt %d (%s), want ok at 3", f.Outcome, f.Attempt, f.Reason)
	}
	fs := finishes(ev)
	if len(fs) != 3 {
		t.Fatalf("%d run.End, want 3", len(fs))
	}
	ids := map[string]bool{}
	for i, r := range fs {
		ids[r.RunID] = true
		wantOutcome, wantRetry := run.Failed, true
		if i == 2 {
			wantOutcome, wantRetry = run.OK, false
		}
		if r.Attempt != i+1 || r.Outcome != wantOutcome || r.Retrying != wantRetry || !r.Slot.Equal(slotAt(0)) {
			t.Errorf("attempt %d: %+v", i+1, r)
		}
		if out := ev.output(r.RunID); len(out) != 1 || out[0] != "attempt "+itoa(i+1) {
			t.Errorf("attempt %d printed %q", i+1, out)
		}
	}
	if len(ids) != 3 {
		t.Errorf("run ids %v, want one per attempt", ids)
	}
	if len(between) != 2 || !strings.HasPrefix(between[0], "skipped: lock held by") {
		t.Errorf("the other supervisor between attempts: %q, want two lock-held skips", between)
	}
	if len(finishes(otherEv)) != 0 {
		t.Errorf("the other supervisor ran: %+v", finishes(otherEv))
	}
	// And the slot is done for the other supervisor once the lock is free.
	if f := other.Fire(context.Background(), j, slotAt(0), false); !strings.HasPrefix(f.Reason, "slot already run by run ") {
		t.Errorf("after the attempts: %s %q, want slot already run", f.Outcome, f.Reason)
	}
}

func TestRetryNotStarted(t *testing.T) {
	every, err := schedule.Parse("@every 1m", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		edit    func(*config.Job)
		runs    int
		outcome run.Outcome
		reason  string
	}{
		{"would reach into the next slot", func(j *config.Job) { j.Sched, j.RetryBackoff = every, 2*time.Minute }, 1,
			run.Failed, "no retry: attempt 2 would start at or after the next slot"},
		{"retry_on leaves failures out", func(j *config.Job) { j.RetryOn = config.RetryOn{Timeout: true} }, 1, run.Failed, ""},
		{"retries exhausted", func(j *config.Job) { j.Retries = 1 }, 2, run.Failed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, ev := newTestSupervisor(t, dir)
			j := failTwice(dir)
			tc.edit(&j)
			slot := time.Now().Truncate(time.Minute)
			f := s.Fire(context.Background(), j, slot, false)
			if n := len(finishes(ev)); n != tc.runs || f.Outcome != tc.outcome || !strings.HasPrefix(f.Reason, tc.reason) {
				t.Errorf("%d runs, last %s %q; want %d, %s %q", n, f.Outcome, f.Reason, tc.runs, tc.outcome, tc.reason)
			}
			if st, _ := s.locker.Inspect(context.Background(), j.Lock); st.Held {
				t.Errorf("lock still held after the slot: %+v", st)
			}
		})
	}
}

func TestRetryDelayDoublesUpToMax(t *testing.T) {
	j := config.Job{RetryBackoff: 10 * time.Second, RetryBackoffMax: 35 * time.Second}
	for n, want := range map[int]time.Duration{1: 10 * time.Second, 2: 20 * time.Second, 3: 35 * time.Second, 9: 35 * time.Second} {
		if got := retryDelay(j, n); got != want {
			t.Errorf("after attempt %d: %v, want %v", n, got, want)
		}
	}
}

func TestWarnAfterEmitsSlowOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
		warn   time.Duration
		slow   int
	}{
		{"passes warn_after", "sleep 0.5", 50 * time.Millisecond, 1},
		{"ends before it", "true", 5 * time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ev := newTestSupervisor(t, t.TempDir())
			j := shJob("slowish", tc.script)
			j.WarnAfter = tc.warn
			s.Fire(context.Background(), j, slotAt(0), false)
			ev.mu.Lock()
			defer ev.mu.Unlock()
			slow, finishedAt := 0, -1
			for i, e := range ev.all {
				switch e := e.(type) {
				case run.Slow:
					slow++
					if finishedAt >= 0 || e.After != tc.warn || e.Attempt != 1 {
						t.Errorf("run.Slow %+v at %d, after run.End at %d", e, i, finishedAt)
					}
				case run.End:
					finishedAt = i
				}
			}
			if slow != tc.slow {
				t.Errorf("%d run.Slow, want %d", slow, tc.slow)
			}
		})
	}
}

// TestRetriesCutShortRecordedAsTheLastAttempt: a slot whose backoff is
// ended by a kill or by the supervisor stopping ends with its last
// attempt, restated (Amends) with why no retry started, and frees the
// lock; while it waited, the lock record said so (RetryAt).
func TestRetriesCutShortRecordedAsTheLastAttempt(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		stop       bool // cancel the fire's context instead of a kill
	}{
		{"killed by operator", "no retry: killed by operator", false},
		{"supervisor stopping", "no retry: supervisor stopping", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, ev := newTestSupervisor(t, dir)
			j := shJob("doomed", "exit 1")
			j.Retries, j.RetryBackoff, j.RetryBackoffMax, j.RetryOn = 5, time.Minute, time.Minute, config.DefaultRetryOn
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			ch := make(chan run.End, 1)
			go func() { ch <- s.Fire(ctx, j, slotAt(0), false) }()
			// Cut once the first attempt has ended and the slot waits: the
			// process is gone by then, so Kill finds only the waiting slot.
			testlog.Eventually(t, 10*time.Second, "the slot waiting for its retry", func() bool {
				return len(finishes(ev)) > 0 && s.waiting("doomed")
			})
			// The record is rewritten as the backoff begins, a moment after
			// the wait is registered; the backoff lasts a minute.
			var st lock.Status
			testlog.Eventually(t, 10*time.Second, "the lock record to say the slot waits for its retry", func() bool {
				st, _ = s.locker.Inspect(context.Background(), j.Lock)
				return !st.Record.RetryAt.IsZero()
			})
			if !st.Record.InFlight || st.Record.PID != os.Getpid() {
				t.Errorf("lock record in the backoff: %+v, want in flight with retry_at, held by the supervisor (pid %d)", st.Record, os.Getpid())
			}
			if tc.stop {
				stop()
			} else if n := s.Kill("doomed", ErrKilled); n != 1 {
				t.Fatalf("Kill signalled %d, want the waiting slot", n)
			}
			f := recv(t, ch)
			all := finishes(ev)
			if len(all) != 2 || !all[0].Retrying || all[1].RunID != all[0].RunID || !all[1].Amends || all[1].Retrying {
				t.Fatalf("ends reported: %+v; want the attempt with a retry to come, then it again as the slot's end", all)
			}
			// The planned start of the next attempt is told with the
			// retry, and nothing of it with the slot's end.
			if d := all[0].RetryAt.Sub(all[0].Ended); d < 59*time.Second || d > 61*time.Second || !all[1].RetryAt.IsZero() {
				t.Errorf("retry_at %v after an end at %v, then %v; want a minute later, then none", all[0].RetryAt, all[0].Ended, all[1].RetryAt)
			}
			if f.Attempt != 1 || f.Outcome != run.Failed || f.Reason != tc.want || f.Retrying {
				t.Errorf("slot's end: attempt %d, %s, reason %q; want attempt 1, failed, %q", f.Attempt, f.Outcome, f.Reason, tc.want)
			}
			if st, _ := s.locker.Inspect(context.Background(), j.Lock); st.Held || !st.Record.RetryAt.IsZero() {
				t.Errorf("lock after the cut: %+v, want free and its record without retry_at", st)
			}
		})
	}
}

// waiting tells whether a slot of job waits for its next attempt.
func (s *Supervisor) waiting(job string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.waits {
		if w.job == job {
			return true
		}
	}
	return false
}

// slowEnds is a recorder whose every end takes took on the clock to
// become durable, as a loaded disk's sync does.
type slowEnds struct {
	NopRecorder
	clock *clock.Fake
	took  time.Duration
}

func (r slowEnds) WriteEnd(context.Context, run.End) (bool, error) {
	r.clock.Advance(r.took)
	return true, nil
}

// The next attempt is due the backoff after the attempt before it ended,
// the time its end says (and its lock record, for a next supervisor):
// not the backoff after that end was recorded.
func TestARetryStartsWhenItsAttemptsEndSaid(t *testing.T) {
	dir := t.TempDir()
	fake := clock.NewFake(slotAt(0))
	ev := &events{}
	s := NewSupervisor(file.NewLocker(filepath.Join(dir, "locks"), InRun), slowEnds{clock: fake, took: 2 * time.Second},
		ev.emit, WithClock(fake))
	j := shJob("flaky", "exit 5")
	j.Retries, j.RetryBackoff, j.RetryBackoffMax, j.RetryOn = 1, 5*time.Second, time.Minute, config.DefaultRetryOn
	done := fireAsync(s, j, slotAt(0))
	var first run.End
	testlog.Eventually(t, 10*time.Second, "attempt 1's end", func() bool {
		fs := finishes(ev)
		if len(fs) > 0 {
			first = fs[0]
		}
		return len(fs) > 0
	})
	if want := first.Ended.Add(5 * time.Second); !first.Retrying || !first.RetryAt.Equal(want) {
		t.Fatalf("attempt 1 ended %v, retrying %v at %v; want a retry at %v", first.Ended, first.Retrying, first.RetryAt, want)
	}
	testlog.Eventually(t, 10*time.Second, "the backoff's timer", func() bool {
		at, ok := fake.NextDeadline()
		return ok && at.After(first.Ended)
	})
	if at, _ := fake.NextDeadline(); !at.Equal(first.RetryAt) {
		t.Errorf("the backoff waits until %v; want %v, the time attempt 1's end said", at, first.RetryAt)
	}
	if st, err := s.locker.Inspect(context.Background(), j.Lock); err != nil || !st.Record.RetryAt.Equal(first.RetryAt) {
		t.Errorf("lock record says retry at %v (%v); want %v", st.Record.RetryAt, err, first.RetryAt)
	}
	fake.Set(first.RetryAt)
	select {
	case end := <-done:
		if end.Attempt != 2 {
			t.Errorf("the slot ended at attempt %d, want 2", end.Attempt)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("attempt 2 did not run once its time came")
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	for _, e := range ev.all {
		if st, ok := e.(run.Start); ok && st.Attempt == 2 && !st.Started.Equal(first.RetryAt) {
			t.Errorf("attempt 2 started at %v, want %v", st.Started, first.RetryAt)
		}
	}
}
