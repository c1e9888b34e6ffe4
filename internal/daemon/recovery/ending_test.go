package recovery

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/testlog"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/file"
	"cronvisor/runner"
	"cronvisor/runner/ending"
)

// toldEnds collects what a Path tells its observers.
type toldEnds struct {
	mu  sync.Mutex
	all []run.End
}

func (t *toldEnds) emit(ev run.Event) {
	if e, ok := ev.(run.End); ok {
		t.mu.Lock()
		t.all = append(t.all, e)
		t.mu.Unlock()
	}
}

func (t *toldEnds) ends() []run.End {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]run.End(nil), t.all...)
}

// TestARecoveredEndIsToldOnce: two recoverers on one state dir record a
// dead supervisor's run; the observers of the two (a daemon and a
// foreground `run`, say) hear of its end once between them, as the run's
// end (slot, start, pid, attempt from its row), marked Recovered.
func TestARecoveredEndIsToldOnce(t *testing.T) {
	t.Parallel()
	host, _ := os.Hostname()
	var told toldEnds
	f := newFixture(t, func(c *Config) { c.Path = ending.New(told.emit) })
	f.writeRecord(t, "j", lock.Record{Holder: run.Holder{PID: 4321, Host: host, Job: "j", RunID: "r", Since: started},
		Slot: started, SupervisorPID: deadPID, Slots: map[string]time.Time{"j": started}, InFlight: true})
	other := New(Config{Store: f.store, Locker: file.NewLocker(f.dir+"/locks", runner.InRun), Alive: aliveOnly(livePID),
		Self: os.Getpid(), Started: started, LockOf: func(j string) string { return j }, StateDir: f.dir,
		Now: func() time.Time { return now.Add(time.Second) }, Path: ending.New(told.emit)})
	defer other.Close()
	for _, r := range []*Recoverer{f.r, other} {
		if _, err := r.Sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	got := told.ends()
	if len(got) != 1 {
		t.Fatalf("told %d ends: %+v; want 1", len(got), got)
	}
	e := got[0]
	if e.RunID != "r" || e.Outcome != run.Interrupted || !e.Recovered || e.Attempt != 1 || e.PID != 4321 ||
		!e.Slot.Equal(started) || !e.Started.Equal(started) || !e.Ended.Equal(now) || !strings.Contains(e.Reason, "died during the run") {
		t.Errorf("told %+v; want r interrupted at %v, recovered, attempt 1, pid 4321", e, now)
	}
}

// TestASlotLeftInItsBackoffIsResumedOrEnded: a dead supervisor's lock
// record says its slot waits for attempt 2. With Resume, the slot is
// handed to it (the last attempt, when it is due); when Resume does not
// take it on, the last attempt is recorded and told once as the slot's
// end, with why. Without Resume, it ends with DiedInBackoff.
func TestASlotLeftInItsBackoffIsResumedOrEnded(t *testing.T) {
	t.Parallel()
	host, _ := os.Hostname()
	retryAt := now.Add(30 * time.Second)
	for _, tc := range []struct {
		name      string
		resume    error // what Resume returns; nil Resume when noResume
		noResume  bool
		wantNote  string // "" : no end told
		wantAsked bool
	}{
		{name: "resumed", wantAsked: true},
		{name: "not taken on", resume: errors.New("the job is disabled"), wantNote: "no retry: the job is disabled", wantAsked: true},
		{name: "nobody resumes", noResume: true, wantNote: DiedInBackoff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var told toldEnds
			asked := make(chan Resumption, 1)
			f := newFixture(t, func(c *Config) {
				c.Path = ending.New(told.emit)
				if !tc.noResume {
					c.Resume = func(_ context.Context, r Resumption) error { asked <- r; return tc.resume }
				}
			})
			exit1 := 1
			attempt := run.Record{Job: "j", RunID: "a1", Outcome: run.Failed, ScheduledAt: started, StartedAt: started,
				EndedAt: started.Add(time.Second), ExitCode: &exit1, Reason: "exit 1", Host: host, SupervisorPID: deadPID, Attempt: 1}
			if _, err := f.store.Adopt(context.Background(), attempt); err != nil {
				t.Fatal(err)
			}
			if err := f.store.Finish(context.Background(), attempt); err != nil {
				t.Fatal(err)
			}
			f.writeRecord(t, "j", lock.Record{Holder: run.Holder{PID: 4321, Host: host, Job: "j", RunID: "a1", Since: started},
				Slot: started, SupervisorPID: deadPID, InFlight: true, RetryAt: retryAt})
			if _, err := f.r.Sweep(context.Background()); err != nil {
				t.Fatal(err)
			}
			if tc.wantAsked {
				select {
				case r := <-asked:
					if r.Job != "j" || r.Attempt != 1 || !r.At.Equal(retryAt) || !r.Slot.Equal(started) {
						t.Errorf("Resume asked %+v; want j's slot after attempt 1, at %v", r, retryAt)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("Resume never asked")
				}
			}
			if tc.wantNote != "" {
				testlog.Poll(10*time.Second, func() bool { return endedSlot(told.ends()) }) // checked below
			}
			f.r.Close() // waits for the resumer's goroutine
			var waits, got []run.End
			for _, e := range told.ends() {
				if e.Retrying {
					waits = append(waits, e)
				} else {
					got = append(got, e)
				}
			}
			if tc.wantAsked && (len(waits) != 1 || !waits[0].Amends || !waits[0].RetryAt.Equal(retryAt) || waits[0].Attempt != 1) {
				t.Errorf("told waits %+v; want attempt 1 restated once, its next attempt due at %v", waits, retryAt)
			}
			if tc.wantNote == "" {
				if len(got) != 0 {
					t.Errorf("told %+v; want no slot's end (the resumed attempts tell their own)", got)
				}
				return
			}
			if len(got) != 1 || !got[0].Amends || got[0].Outcome != run.Failed || got[0].Reason != "exit 1; "+tc.wantNote {
				t.Fatalf("told %+v; want attempt 1 restated as the slot's end with %q", got, tc.wantNote)
			}
			if row, _ := f.row(t, "a1"); row.Reason != "exit 1; "+tc.wantNote {
				t.Errorf("row reason %q; want %q", row.Reason, "exit 1; "+tc.wantNote)
			}
		})
	}
}

// endedSlot reports whether ends has a slot's end (not a retry's wait).
func endedSlot(ends []run.End) bool {
	for _, e := range ends {
		if !e.Retrying {
			return true
		}
	}
	return false
}
