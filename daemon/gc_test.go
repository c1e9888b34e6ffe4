package daemon

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestPauseGCFollowsTheLiveHeap grows a live heap 128 MiB past a first
// limit 8 MiB above what the test binary holds while the collector is
// paused, and checks that it collected a few times as the heap doubled,
// not back to back under a limit below the live heap (a fixed limit
// collects 30 to 40 times here); and that resume restores the settings.
func TestPauseGCFollowsTheLiveHeap(t *testing.T) {
	const chunk, chunks = 256 << 10, 512 // 128 MiB live
	percent, limit := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1)
	debug.SetGCPercent(percent)
	limits := make(chan int64, 1024)
	var before, after runtime.MemStats
	runtime.GC()
	start := nextLimit() + 8<<20
	runtime.ReadMemStats(&before)
	resume := pauseGC(start, func(l int64) {
		select {
		case limits <- l:
		default:
		}
	})
	live := make([][]byte, 0, chunks)
	for range chunks {
		live = append(live, make([]byte, chunk))
		runtime.Gosched() // the cleanup's turn, as a start-up's other work gives it
	}
	runtime.ReadMemStats(&after)
	resume()
	runtime.KeepAlive(live)

	cycles := after.NumGC - before.NumGC
	if cycles < 1 || cycles > 16 {
		t.Errorf("%d collections while 128 MiB became live over a first limit of %d MiB; want 1-16", cycles, start>>20)
	}
	select {
	case l := <-limits:
		if l < start {
			t.Errorf("a limit of %d set after a collection, below the first %d", l, start)
		}
	case <-time.After(10 * time.Second):
		t.Error("no limit set after a collection")
	}
	if got := debug.SetGCPercent(percent); got != percent {
		t.Errorf("GC percent %d after resume, want %d", got, percent)
	}
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("memory limit %d after resume, want %d", got, limit)
	}
}
