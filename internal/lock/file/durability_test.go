package file

import (
	"context"
	"errors"
	"testing"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/lock"
)

// TestSlotCursorDurability (issue 29): in both durability modes the slot
// cursor a lease wrote is read by the next locker on the directory (the
// next process on the state dir) and refuses its slot, released or
// never; machine syncs the cursor (SetPID starts the sync, Release waits
// for it), process never does.
func TestSlotCursorDurability(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		opts      []Option
		wantSync  bool
		releaseIt bool // false: the holder "dies" with its lease held
	}{
		{"default", nil, true, true},
		{"machine", []Option{WithDurability(run.DurabilityMachine)}, true, true},
		{"process", []Option{WithDurability(run.DurabilityProcess)}, false, true},
		{"process, holder dies", []Option{WithDurability(run.DurabilityProcess)}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			first := NewLocker(dir, locktest.InRun, tc.opts...)
			g := acquire(t, first, "x", "a", "run-1", locktest.SlotAt(10), true)
			if err := g.Lease.SetPID(4242); err != nil {
				t.Fatal(err)
			}
			le := g.Lease.(*fileLease)
			le.Lock()
			synced := le.synced != nil || le.unsynced
			le.Unlock()
			if synced != tc.wantSync {
				t.Errorf("cursor synced: %v, want %v", synced, tc.wantSync)
			}
			if tc.releaseIt {
				if err := g.Lease.Release(); err != nil {
					t.Fatal(err)
				}
			} else {
				// The dead holder's descriptors stay open: the lock is held
				// and the cursor is in the page cache only.
				t.Cleanup(func() { _ = g.Lease.Release() })
			}
			next := NewLocker(dir, locktest.InRun, tc.opts...)
			_, err := next.Acquire(context.Background(), lock.Request{
				Name: "x", Record: lock.Record{Holder: run.Holder{Job: "a", RunID: "run-2"}, Slot: locktest.SlotAt(10)}, CheckSlot: true,
			})
			want := error(lock.ErrSlotDone)
			var held *lock.HeldError
			if !tc.releaseIt {
				if !errors.As(err, &held) || held.Record.RunID != "run-1" {
					t.Fatalf("second locker while held: %v, want held by run-1", err)
				}
				return
			}
			if !errors.Is(err, want) {
				t.Fatalf("second locker on the same slot: %v, want %v", err, want)
			}
			if err := acquire(t, next, "x", "a", "run-3", locktest.SlotAt(11), true).Lease.Release(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
