package file

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/lock"
)

// TestRelockAfterDeletion: a lock held while its directory is deleted is
// free to another process's locker on a new file at the path, until
// Relock takes that file too; the new file then holds the record, and
// Release frees it.
func TestRelockAfterDeletion(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "locks")
	mine := NewLocker(dir, locktest.InRun)
	other := NewLocker(dir, locktest.InRun) // another process's: flock excludes between open files
	slot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	g := acquire(t, mine, "a", "a", "run-1", slot, true)
	if n, err := mine.Relock(); n != 0 || err != nil {
		t.Fatalf("Relock with nothing deleted: %d, %v; want 0", n, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if n, err := mine.Relock(); n != 1 || err != nil {
		t.Fatalf("Relock after the deletion: %d, %v; want 1", n, err)
	}
	if n, err := mine.Relock(); n != 0 || err != nil {
		t.Fatalf("Relock again: %d, %v; want 0", n, err)
	}
	var held *lock.HeldError
	_, err := other.Acquire(t.Context(), lock.Request{Name: "a"})
	if !errors.As(err, &held) || held.Record.RunID != "run-1" {
		t.Fatalf("another locker's Acquire during the run: %v; want held by run-1", err)
	}
	if err := g.Lease.SetPID(4242); err != nil {
		t.Fatal(err)
	}
	if err := g.Lease.Release(); err != nil {
		t.Fatal(err)
	}
	g2 := acquire(t, other, "a", "a", "run-2", slot.Add(time.Minute), true)
	if p := g2.Previous; p == nil || p.RunID != "run-1" || p.PID != 4242 || p.InFlight || !p.Slots["a"].Equal(slot) {
		t.Errorf("record found after the release: %+v; want run-1's, pid 4242, released, its slot", p)
	}
	if err := g2.Lease.Release(); err != nil {
		t.Fatal(err)
	}
}

// TestRelockRefusedWhenTaken: when another process locked the new file
// first, Relock says so.
func TestRelockRefusedWhenTaken(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "locks")
	mine, other := NewLocker(dir, locktest.InRun), NewLocker(dir, locktest.InRun)
	g := acquire(t, mine, "a", "a", "run-1", time.Time{}, false)
	defer g.Lease.Release()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	g2 := acquire(t, other, "a", "a", "run-2", time.Time{}, false)
	defer g2.Lease.Release()
	if n, err := mine.Relock(); n != 0 || err == nil {
		t.Fatalf("Relock of a lock another took: %d, %v; want an error", n, err)
	}
}
