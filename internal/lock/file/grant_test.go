package file

import (
	"testing"

	"cronvisor/internal/harness/locktest"
)

// TestFileGrant checks what a file grant offers: the locked file, the
// previous record (none on a new lock), and nothing of Redis's.
func TestFileGrant(t *testing.T) {
	t.Parallel()
	l := NewLocker(t.TempDir(), locktest.InRun)
	first := acquire(t, l, "x", "j", "run-1", locktest.SlotAt(1), true)
	if first.File == nil || !first.Preceded || first.Previous != nil {
		t.Fatalf("first grant: File %v, Preceded %v, Previous %+v; want the file, true, nil", first.File, first.Preceded, first.Previous)
	}
	if first.Lost != nil || first.Tethered || first.MinLifeLeft != 0 || first.FencingToken != 0 {
		t.Errorf("file grant offers Lost %v, MinLifeLeft %v, token %d; want none", first.Lost, first.MinLifeLeft, first.FencingToken)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	second := acquire(t, l, "x", "j", "run-2", locktest.SlotAt(2), true)
	defer second.Release()
	prev := second.Previous
	if !second.Preceded || prev == nil || prev.RunID != "run-1" || prev.InFlight || !prev.Slots["j"].Equal(locktest.SlotAt(1)) {
		t.Fatalf("second grant: Preceded %v, Previous %+v; want run-1's released record", second.Preceded, prev)
	}
	prev.Slots["j"] = locktest.SlotAt(9) // the grant's copy is its own
	if again := second.Record(); !again.Slots["j"].Equal(locktest.SlotAt(2)) {
		t.Errorf("changing Previous changed the lease's record: %v", again.Slots)
	}
}
