package file

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/harness/locktest"
)

// awaitBound is how long AwaitRelease may take to notice a release; it
// notices within milliseconds, the bound is for a loaded machine.
const awaitBound = 2 * time.Second

// awaitAsync runs AwaitRelease in a goroutine; the channel gets its result.
func awaitAsync(ctx context.Context, l *Locker, name, runID string) <-chan error {
	done := make(chan error, 1)
	go func() { done <- l.AwaitRelease(ctx, name, runID) }()
	return done
}

// stillWaiting fails the test if AwaitRelease has returned.
func stillWaiting(t *testing.T, done <-chan error, when string) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("AwaitRelease returned (%v) %s", err, when)
	default:
	}
}

// returnsSoon waits for AwaitRelease's result and returns how long it took
// from since.
func returnsSoon(t *testing.T, done <-chan error, since time.Time) time.Duration {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("AwaitRelease: %v", err)
		}
		return time.Since(since)
	case <-time.After(awaitBound):
		t.Fatalf("AwaitRelease did not return within %v of the release", awaitBound)
		return 0
	}
}

// TestAwaitReleaseWakesAtTheSurvivorsExit: a supervisor (a helper process)
// dies while its run's processes hold the lock; AwaitRelease waits while
// they do, and returns as soon as the last one exits, also when the
// holder forks a new one during the wait.
func TestAwaitReleaseWakesAtTheSurvivorsExit(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"child", "grandchild", "forks"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			ctx := locktest.Context(t, 20*time.Second)
			dir := t.TempDir()
			survivor, helper := startHelper(ctx, t, mode, dir)
			if err := helper.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = helper.Wait()
			l := NewLocker(dir, locktest.InRun)
			done := awaitAsync(ctx, l, "survivor", "run-1")
			if mode == "forks" {
				// The shell holds the lock, then leaves a
				// background sleep holding it and exits.
				var bg int
				locktest.WaitUntil(ctx, t, "the shell forked its successor", func() bool {
					b, err := os.ReadFile(filepath.Join(dir, "bg.pid"))
					if err != nil {
						return false
					}
					bg, err = strconv.Atoi(strings.TrimSpace(string(b)))
					return err == nil
				})
				t.Cleanup(func() { locktest.KillAndReap(bg) })
				locktest.KillAndReap(survivor) // the shell, if not gone already
				survivor = bg
			}
			stillWaiting(t, done, "while the run's process holds the lock")
			released := time.Now()
			locktest.KillAndReap(survivor)
			t.Logf("returned %v after the last holder's exit", returnsSoon(t, done, released).Round(time.Microsecond))
		})
	}
}

func TestAwaitReleaseReturnsAtOnce(t *testing.T) {
	t.Parallel()
	ctx := locktest.Context(t, 10*time.Second)
	dir := t.TempDir()
	l := NewLocker(dir, locktest.InRun)
	if err := acquire(t, l, "free", "j", "run-1", locktest.SlotAt(1), true).Release(); err != nil {
		t.Fatal(err)
	}
	held := acquire(t, l, "other", "j", "run-2", locktest.SlotAt(1), true)
	defer held.Release()
	tests := []struct{ name, lock, runID string }{
		{"free lock", "free", "run-1"},
		{"no lock file", "never", "run-1"},
		{"held by another run", "other", "run-1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := l.AwaitRelease(ctx, tc.lock, tc.runID); err != nil {
				t.Fatalf("AwaitRelease: %v", err)
			}
		})
	}
}

// TestAwaitReleaseStopsWithItsContext: a wait for a lock that stays held
// ends with the context's error when the context is cancelled.
func TestAwaitReleaseStopsWithItsContext(t *testing.T) {
	t.Parallel()
	ctx := locktest.Context(t, 20*time.Second)
	dir := t.TempDir()
	_, helper := startHelper(ctx, t, "child", dir)
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	wctx, cancel := context.WithCancel(ctx)
	done := awaitAsync(wctx, NewLocker(dir, locktest.InRun), "survivor", "run-1")
	stillWaiting(t, done, "while the survivor holds the lock")
	cancelled := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("AwaitRelease after cancel: %v, want context.Canceled", err)
		}
		t.Logf("returned %v after the cancel", time.Since(cancelled).Round(time.Microsecond))
	case <-time.After(awaitBound):
		t.Fatalf("AwaitRelease did not return within %v of the cancel", awaitBound)
	}
}

// TestListChangedSince lists only the locks whose record was written at
// or after the given time.
func TestListChangedSince(t *testing.T) {
	t.Parallel()
	ctx := locktest.Context(t, 10*time.Second)
	dir := t.TempDir()
	l := NewLocker(dir, locktest.InRun)
	for _, name := range []string{"old", "new"} {
		if err := acquire(t, l, name, "j", "run-"+name, locktest.SlotAt(1), true).Release(); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "old.lock"), past, past); err != nil {
		t.Fatal(err)
	}
	sts, err := l.ListChangedSince(ctx, time.Now().Add(-time.Minute))
	if err != nil || len(sts) != 1 || sts[0].Name != "new" || sts[0].Record.RunID != "run-new" {
		t.Fatalf("ListChangedSince: %+v, %v; want the one lock written since", sts, err)
	}
	if all, err := l.List(ctx); err != nil || len(all) != 2 {
		t.Fatalf("List: %+v, %v; want both", all, err)
	}
}
