package file

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/lock"
)

// acquire takes lock name for job at slot, failing the test on error.
func acquire(t *testing.T, l *Locker, name, job, runID string, slot time.Time, check bool) lock.Grant {
	t.Helper()
	lease, err := l.Acquire(context.Background(), lock.Request{
		Name: name, Record: lock.Record{Holder: run.Holder{Job: job, RunID: runID}, Slot: slot}, CheckSlot: check,
	})
	if err != nil {
		t.Fatalf("Acquire(%s, %s, %s): %v", name, job, runID, err)
	}
	return lease
}

func TestAcquireConcurrentOneWins(t *testing.T) {
	t.Parallel()
	l := NewLocker(t.TempDir(), locktest.InRun)
	const n = 16
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		leases  = make(chan lock.Lease, n)
		errs    = make(chan error, n)
		release = make(chan struct{})
	)
	for i := range n {
		wg.Go(func() {
			<-start
			lease, err := l.Acquire(context.Background(), lock.Request{
				Name: "shared", Record: lock.Record{Holder: run.Holder{Job: "j", RunID: "run-" + string(rune('a'+i))}},
			})
			if err != nil {
				errs <- err
				return
			}
			leases <- lease
			<-release // hold until every contender has tried
		})
	}
	close(start)
	for range n - 1 {
		err := <-errs
		var held *lock.HeldError
		if !errors.Is(err, lock.ErrLocked) || !errors.As(err, &held) {
			t.Fatalf("loser got %v, want a *lock.HeldError", err)
		}
		if held.Record.Foreign {
			t.Errorf("holder in this process reported as foreign: %+v", held.Record)
		}
	}
	winner := <-leases
	close(release)
	wg.Wait()
	if len(leases) != 0 || len(errs) != 0 {
		t.Fatalf("more than one winner: %d extra leases, %d extra errors", len(leases), len(errs))
	}
	if err := winner.Release(); err != nil {
		t.Fatal(err)
	}
}

// TestOwnLeaseRefusesWithoutTheFile checks the fast path for a lock this
// process holds: the refusal comes from the lease in memory, naming its
// holder, even with the file deleted (which voids the lock for other
// processes, not for this one); once released the lock is taken again.
func TestOwnLeaseRefusesWithoutTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := NewLocker(dir, locktest.InRun)
	slot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	lease := acquire(t, l, "job", "job", "run-1", slot, true)
	if err := lease.SetPID(4242); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "job.lock")); err != nil {
		t.Fatal(err)
	}
	_, err := l.Acquire(context.Background(), lock.Request{Name: "job",
		Record: lock.Record{Holder: run.Holder{Job: "job", RunID: "run-2"}, Slot: slot.Add(time.Second)}, CheckSlot: true})
	var held *lock.HeldError
	if !errors.As(err, &held) || held.Record.RunID != "run-1" || held.Record.PID != 4242 {
		t.Fatalf("second Acquire: %v (holder %+v), want held by run-1, pid 4242", err, held)
	}
	if err := lease.Release(); err != nil {
		t.Fatal(err)
	}
	acquire(t, l, "job", "job", "run-3", slot.Add(2*time.Second), true).Release()
}

// TestSlots runs sequences of acquire-and-release steps on one lock.
func TestSlots(t *testing.T) {
	t.Parallel()
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	type step struct {
		job   string
		slot  time.Time
		check bool // false: a manual run
		want  error
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"same slot twice", []step{{"a", locktest.SlotAt(10), true, nil}, {"a", locktest.SlotAt(10), true, lock.ErrSlotDone}}},
		{"earlier slot refused", []step{{"a", locktest.SlotAt(10), true, nil}, {"a", locktest.SlotAt(5), true, lock.ErrSlotDone}}},
		{"later slot runs", []step{{"a", locktest.SlotAt(10), true, nil}, {"a", locktest.SlotAt(11), true, nil}}},
		{"same instant in another zone", []step{
			{"a", locktest.SlotAt(10), true, nil}, {"a", locktest.SlotAt(10).In(shanghai), true, lock.ErrSlotDone}}},
		{"manual runs do not advance the cursor", []step{
			{"a", locktest.SlotAt(20), false, nil}, {"a", locktest.SlotAt(10), true, nil},
			{"a", locktest.SlotAt(30), false, nil}, {"a", locktest.SlotAt(10), true, lock.ErrSlotDone}}},
		{"manual run after the slot ran", []step{{"a", locktest.SlotAt(10), true, nil}, {"a", locktest.SlotAt(10), false, nil}}},
		{"jobs sharing a lock keep their own cursors", []step{
			{"a", locktest.SlotAt(10), true, nil}, {"b", locktest.SlotAt(10), true, nil}, {"b", locktest.SlotAt(10), true, lock.ErrSlotDone},
			{"a", locktest.SlotAt(11), true, nil}, {"b", locktest.SlotAt(9), true, lock.ErrSlotDone}, {"b", locktest.SlotAt(11), true, nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := NewLocker(t.TempDir(), locktest.InRun)
			for i, s := range tt.steps {
				runID := "run-" + string(rune('0'+i))
				lease, err := l.Acquire(context.Background(), lock.Request{
					Name: "shared", Record: lock.Record{Holder: run.Holder{Job: s.job, RunID: runID}, Slot: s.slot}, CheckSlot: s.check,
				})
				if !errors.Is(err, s.want) {
					t.Fatalf("step %d (%s at %s): got %v, want %v", i, s.job, s.slot, err, s.want)
				}
				if err == nil {
					if err := lease.Release(); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

func TestSlotDoneNamesTheRunAndFreesTheLock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := NewLocker(dir, locktest.InRun)
	if err := acquire(t, l, "x", "a", "run-1", locktest.SlotAt(10), true).Release(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, "x.lock"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Acquire(context.Background(), lock.Request{
		Name: "x", Record: lock.Record{Holder: run.Holder{Job: "a", RunID: "run-2"}, Slot: locktest.SlotAt(10)}, CheckSlot: true,
	})
	var done *lock.SlotDoneError
	if !errors.As(err, &done) || done.Record.RunID != "run-1" || done.Lock != "x" {
		t.Fatalf("got %v, want *lock.SlotDoneError naming run-1", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "x.lock")); string(after) != string(before) {
		t.Errorf("refused acquire rewrote the record:\n%s\nwas\n%s", after, before)
	}
	if st, err := l.Inspect(context.Background(), "x"); err != nil || st.Held {
		t.Errorf("after SlotDone: Inspect = %+v, %v; want free", st, err)
	}
}

func TestAcquireRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  lock.Request
		want error
	}{
		{"parent directory", lock.Request{Name: "../x"}, lock.ErrBadName},
		{"slash", lock.Request{Name: "a/b"}, lock.ErrBadName},
		{"empty", lock.Request{Name: ""}, lock.ErrBadName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewLocker(t.TempDir(), locktest.InRun).Acquire(context.Background(), tt.req)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
	t.Run("slot check without a slot", func(t *testing.T) {
		t.Parallel()
		_, err := NewLocker(t.TempDir(), locktest.InRun).Acquire(context.Background(), lock.Request{Name: "x", CheckSlot: true})
		if err == nil || !strings.Contains(err.Error(), "needs a slot") {
			t.Fatalf("got %v, want a missing-slot error", err)
		}
	})
}

func TestPlantedFilesAreRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		plant  func(t *testing.T, path, target string)
		target string // content of the symlink target, "" for none
	}{
		{"symlink to a file", func(t *testing.T, path, target string) { symlink(t, target, path) }, "precious\n"},
		{"dangling symlink", func(t *testing.T, path, target string) { symlink(t, target, path) }, ""},
		{"fifo", func(t *testing.T, path, _ string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			target := filepath.Join(t.TempDir(), "target")
			if tt.target != "" {
				if err := os.WriteFile(target, []byte(tt.target), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(dir, "x.lock")
			tt.plant(t, path, target)
			l := NewLocker(dir, locktest.InRun)
			_, err := l.Acquire(context.Background(), lock.Request{Name: "x", Record: lock.Record{Holder: run.Holder{Job: "j"}}})
			if !errors.Is(err, lock.ErrUnsafeFile) || !strings.Contains(err.Error(), path) {
				t.Errorf("Acquire: got %v, want lock.ErrUnsafeFile naming %s", err, path)
			}
			if _, err := l.Inspect(context.Background(), "x"); !errors.Is(err, lock.ErrUnsafeFile) {
				t.Errorf("Inspect: got %v, want lock.ErrUnsafeFile", err)
			}
			got, err := os.ReadFile(target)
			if tt.target == "" && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("dangling target was created (%v)", err)
			}
			if tt.target != "" && string(got) != tt.target {
				t.Errorf("target changed to %q", got)
			}
		})
	}
}

func symlink(t *testing.T, target, path string) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// TestPermissions clears the umask, so it proves the modes cronvisor asks
// for; it is not parallel because the umask is process-wide.
func TestPermissions(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	dir := filepath.Join(t.TempDir(), "state", "locks")
	l := NewLocker(dir, locktest.InRun)
	if err := acquire(t, l, "x", "j", "r", locktest.SlotAt(1), true).Release(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want os.FileMode
	}{{dir, 0o700}, {filepath.Join(dir, "x.lock"), 0o600}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != c.want {
			t.Errorf("%s: mode %v, want %v", c.path, fi.Mode().Perm(), c.want)
		}
	}
}

func TestReleaseIsIdempotentAndKeepsTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := NewLocker(dir, locktest.InRun)
	lease := acquire(t, l, "x", "j", "run-1", locktest.SlotAt(1), true)
	if lease.Lost != nil {
		t.Fatal("file grant may be lost: a flock cannot be taken away")
	}
	for i := range 2 {
		if err := lease.Release(); err != nil {
			t.Fatalf("Release #%d: %v", i+1, err)
		}
	}
	if err := lease.SetPID(1); !errors.Is(err, lock.ErrReleased) {
		t.Errorf("SetPID after Release: got %v, want lock.ErrReleased", err)
	}
	rec, ok := parseRecord(mustRead(t, filepath.Join(dir, "x.lock")))
	if !ok || rec.RunID != "run-1" {
		t.Errorf("record after release: %+v, %v; want run-1's", rec, ok)
	}
	if err := acquire(t, l, "x", "j", "run-2", locktest.SlotAt(2), true).Release(); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestList(t *testing.T) {
	t.Parallel()
	t.Run("missing directory", func(t *testing.T) {
		t.Parallel()
		got, err := NewLocker(filepath.Join(t.TempDir(), "nope"), locktest.InRun).List(context.Background())
		if err != nil || len(got) != 0 {
			t.Fatalf("got %v, %v; want nothing", got, err)
		}
	})
	t.Run("locks sorted, others skipped, bad ones reported", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		l := NewLocker(dir, locktest.InRun)
		for _, name := range []string{"b", "a.x", "a"} {
			if err := acquire(t, l, name, "j", "r-"+name, locktest.SlotAt(1), true).Release(); err != nil {
				t.Fatal(err)
			}
		}
		held := acquire(t, l, "c", "j", "r-c", locktest.SlotAt(1), true)
		defer held.Release()
		if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		symlink(t, "/etc/passwd", filepath.Join(dir, "evil.lock"))
		got, err := l.List(context.Background())
		if !errors.Is(err, lock.ErrUnsafeFile) {
			t.Errorf("List error %v, want lock.ErrUnsafeFile for evil.lock", err)
		}
		var names []string
		for _, st := range got {
			names = append(names, st.Name)
			if st.Held != (st.Name == "c") || st.Record.RunID != "r-"+st.Name {
				t.Errorf("%s: %+v", st.Name, st)
			}
		}
		if strings.Join(names, " ") != "a a.x b c" {
			t.Errorf("names %v, want [a a.x b c]", names)
		}
	})
}

func TestInspectUnknownLockIsFree(t *testing.T) {
	t.Parallel()
	st, err := NewLocker(t.TempDir(), locktest.InRun).Inspect(context.Background(), "never")
	if err != nil || st.Held || st.Name != "never" {
		t.Fatalf("got %+v, %v; want free", st, err)
	}
}
