package heapfloor

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, floor int64
		base, want  int
	}{
		{live: 2 * mib, floor: 8 * mib, base: 100, want: 400},
		{live: 3 * mib, floor: 8 * mib, base: 100, want: 267}, // rounded up
		{live: 8 * mib, floor: 8 * mib, base: 100, want: 100},
		{live: 64 * mib, floor: 8 * mib, base: 100, want: 100}, // large heap: the process's own
		{live: 2 * mib, floor: 8 * mib, base: 500, want: 500},  // never below the base
		{live: 2 * mib, floor: 8 * mib, base: -1, want: -1},    // collector off stays off
		{live: 0, floor: 8 * mib, base: 100, want: 100},        // before the first cycle
	} {
		if got := Percent(c.live, c.floor, c.base); got != c.want {
			t.Errorf("Percent(%d, %d, %d) = %d, want %d", c.live, c.floor, c.base, got, c.want)
		}
	}
}

// TestHoldFollowsEachCycle: after each cycle the percentage is set from
// the heap that survived it, and stop restores the process's own.
func TestHoldFollowsEachCycle(t *testing.T) {
	base := debug.SetGCPercent(100)
	defer debug.SetGCPercent(base)
	runtime.GC()
	const floor = 1 << 30 // far above this test's live heap
	set := make(chan int, 16)
	stop := start(floor, func(p int) {
		select {
		case set <- p:
		default:
		}
	})
	defer stop()   // a failed test must not leave its hold on the next
	first := <-set // at Hold, from the last cycle's live heap
	if first <= 100 {
		t.Fatalf("percentage at Hold = %d, want above 100 for a live heap under 1 GiB", first)
	}
	for cycle := range 2 {
		runtime.GC()
		select {
		case p := <-set:
			if p <= 100 {
				t.Fatalf("cycle %d: percentage %d, want above 100", cycle, p)
			}
			if want := Percent(liveHeap(), floor, 100); p < want/2 || p > want*2 {
				t.Fatalf("cycle %d: percentage %d, want about %d", cycle, p, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("cycle %d: no percentage set within 5 s of the cycle", cycle)
		}
	}
	stop()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("percentage after stop = %d, want the process's own 100", got)
	}
	runtime.GC()
	select {
	case p := <-set:
		t.Fatalf("percentage %d set after stop", p)
	case <-time.After(200 * time.Millisecond):
	}
}

// TestHoldLeavesGOGCAlone: an operator's GOGC stands.
func TestHoldLeavesGOGCAlone(t *testing.T) {
	t.Setenv("GOGC", "50")
	base := debug.SetGCPercent(50)
	defer debug.SetGCPercent(base)
	stop := Hold(1 << 30)
	defer stop()
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if got := debug.SetGCPercent(50); got != 50 {
		t.Fatalf("percentage with GOGC=50 = %d, want 50", got)
	}
}

// TestPercentNow reads the percentage in force, the collector off
// included.
func TestPercentNow(t *testing.T) {
	base := debug.SetGCPercent(37)
	defer debug.SetGCPercent(base)
	if got := percentNow(); got != 37 {
		t.Fatalf("percentNow() = %d after SetGCPercent(37)", got)
	}
	debug.SetGCPercent(-1)
	if got := percentNow(); got != -1 {
		t.Fatalf("percentNow() = %d with the collector off, want -1", got)
	}
}
