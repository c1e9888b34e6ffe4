package runner

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/harness/testlog"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/file"
)

// losingLocker hands out file grants whose Lost channel the test closes,
// and with a fencing token, as a network backend does.
type losingLocker struct {
	lock.Locker
	lost chan struct{}
}

func (l *losingLocker) Acquire(ctx context.Context, req lock.Request) (lock.Grant, error) {
	g, err := l.Locker.Acquire(ctx, req)
	if err != nil {
		return g, err
	}
	g.Lost, g.FencingToken = l.lost, 42
	return g, nil
}

func TestLockLost(t *testing.T) {
	tests := []struct {
		name       string
		policy     config.LockLost
		want       run.Outcome
		wantReason string
	}{
		{"end: the run is ended like a timeout", config.LockLostEnd, run.Interrupted, "lock lost"},
		{"continue: the run finishes unguarded", config.LockLostContinue, run.OK, "continued unguarded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ll := &losingLocker{Locker: file.NewLocker(filepath.Join(t.TempDir(), "locks"), InRun), lost: make(chan struct{})}
			ev := &events{}
			s := NewSupervisor(ll, NopRecorder{}, ev.emit)
			j := shJob("lease", `echo "token=$CRONVISOR_FENCING_TOKEN"; sleep 0.5`)
			j.OnLockLost = tc.policy
			done := fireAsync(s, j, slotAt(0))
			active := waitRunning(t, s, ev, "lease")
			// Lose the lease only once the job has printed: cancelled
			// before its echo, it would have nothing to show.
			testlog.Eventually(t, 5*time.Second, "the job's output", func() bool { return len(ev.output(active.RunID)) > 0 })
			close(ll.lost)
			f := recv(t, done)
			if f.Outcome != tc.want || !strings.Contains(f.Reason, tc.wantReason) {
				t.Fatalf("outcome %s %q, want %s with %q", f.Outcome, f.Reason, tc.want, tc.wantReason)
			}
			if out := ev.output(active.RunID); len(out) != 1 || out[0] != "token=42" {
				t.Errorf("output %q, want the fencing token in the environment", out)
			}
		})
	}
}

// TestLastOKMemo: a fire reads CRONVISOR_LAST_OK_SLOT from the store only
// when the lock's previous holder is not the run that left the memo.
func TestLastOKMemo(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	stored, queries := time.Date(2026, 5, 31, 23, 0, 0, 0, time.UTC), 0
	lookup := func(context.Context, string) (time.Time, error) {
		mu.Lock()
		defer mu.Unlock()
		queries++
		return stored, nil
	}
	s, ev := newTestSupervisor(t, dir, WithLastOK(lookup))
	okJob := shJob("memo", `echo "$CRONVISOR_LAST_OK_SLOT"`)
	failJob := shJob("memo", `echo "$CRONVISOR_LAST_OK_SLOT"; exit 1`)
	allowJob := okJob
	allowJob.Overlap = config.OverlapAllow

	fire := func(j config.Job, sec int, wantSlot time.Time, wantQueries int) {
		t.Helper()
		f := s.Fire(context.Background(), j, slotAt(sec), false)
		out := ev.output(f.RunID)
		if want := wantSlot.Format(time.RFC3339Nano); len(out) != 1 || out[0] != want {
			t.Fatalf("fire at :%02d: CRONVISOR_LAST_OK_SLOT %q, want %q", sec, out, want)
		}
		mu.Lock()
		defer mu.Unlock()
		if queries != wantQueries {
			t.Fatalf("fire at :%02d: %d store queries so far, want %d", sec, queries, wantQueries)
		}
	}
	fire(okJob, 1, stored, 1)      // nothing remembered: asks the store
	fire(okJob, 2, slotAt(1), 1)   // its own last run ended ok at :01
	fire(failJob, 3, slotAt(2), 1) // a failure...
	fire(okJob, 4, slotAt(2), 1)   // ...leaves the last ok where it was

	// Another process runs the job: it takes the lock and rewrites the record.
	other := file.NewLocker(filepath.Join(dir, "locks"), InRun)
	lease, err := other.Acquire(context.Background(), lock.Request{Name: "memo",
		Record: lock.Record{Holder: run.Holder{PID: 1, Host: "elsewhere", Job: "memo", RunID: "foreign"}, SupervisorPID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	stored = time.Date(2026, 6, 1, 11, 0, 0, 0, time.UTC)
	mu.Unlock()
	fire(okJob, 5, stored, 2)

	// A run without the lock (overlap: allow) proves nothing: it asks the
	// store, and the memo goes. (The fake store learns of runs by hand.)
	fire(allowJob, 6, stored, 3)
	mu.Lock()
	stored = slotAt(6)
	mu.Unlock()
	fire(okJob, 7, slotAt(6), 4)
	fire(okJob, 8, slotAt(7), 4)
}
