package file

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/lock"
)

// TestAcquireWaitsOutTransientHolders: Acquire retries while the only
// locks on the file are about to go (an Inspect probe's shared lock, a
// released descriptor of this process still in a forked child), and not
// at all for a real holder.
func TestAcquireWaitsOutTransientHolders(t *testing.T) {
	t.Parallel()
	// flockFD takes a lock on a descriptor of its own, as an Inspect probe
	// or a forked child's copy would hold it.
	flockFD := func(how int) func(*testing.T, *Locker, string) func() {
		return func(t *testing.T, _ *Locker, path string) func() {
			f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
				t.Fatal(err)
			}
			return func() { closeLocked(f) } // as Inspect does
		}
	}
	tests := []struct {
		name       string
		hold       func(t *testing.T, l *Locker, path string) (drop func())
		dropAfter  int // pauses after which the holder goes; 0: never
		wantErr    error
		wantPauses int // at least this many when wantErr is nil (a child forked by a parallel test may keep a dropped lock a moment longer), else exactly
	}{
		{"probe gone at the first retry", flockFD(syscall.LOCK_SH), 1, nil, 1},
		{"probe gone later", flockFD(syscall.LOCK_SH), 3, nil, 3},
		{"shared holder that stays", flockFD(syscall.LOCK_SH), 0, lock.ErrLocked, probeRetries},
		{"released descriptor in a forked child", flockFD(syscall.LOCK_EX), 2, nil, 2},
		{"live lease of this locker: no retry", func(t *testing.T, l *Locker, _ string) func() {
			lease := acquire(t, l, "x", "j", "r", locktest.SlotAt(1), false)
			t.Cleanup(func() { lease.Release() })
			return func() { lease.Release() }
		}, 0, lock.ErrLocked, 0},
		{"holder in another process: no retry", func(t *testing.T, l *Locker, path string) func() {
			return startFlock(t, l, path).drop
		}, 0, lock.ErrLocked, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			l := NewLocker(dir, locktest.InRun)
			drop := tt.hold(t, l, filepath.Join(dir, "x.lock"))
			pauses := 0
			l.pause = func(context.Context) error {
				if pauses++; pauses == tt.dropAfter {
					drop()
				}
				return nil
			}
			lease, err := l.Acquire(context.Background(), lock.Request{Name: "x", Record: lock.Record{Holder: run.Holder{Job: "j"}}})
			pausesOK := pauses == tt.wantPauses || (tt.wantErr == nil && pauses > tt.wantPauses && pauses < probeRetries)
			if !errors.Is(err, tt.wantErr) || !pausesOK {
				t.Fatalf("got %v after %d pauses, want %v after %d", err, pauses, tt.wantErr, tt.wantPauses)
			}
			if lease.Lease != nil {
				lease.Release()
			}
		})
	}
}
