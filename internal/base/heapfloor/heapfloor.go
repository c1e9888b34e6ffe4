// Package heapfloor spaces the collector's cycles by bytes allocated, not
// by the live heap alone.
//
// The collector runs when the heap has grown by GOGC percent of what
// survived the last cycle. A supervisor's live heap is small (its jobs,
// their state) and every fire allocates its garbage afresh (the run's
// argv and environment, its records, its events), so with the default
// percentage a busy daemon ran a cycle every few megabytes of fires,
// each marking the same live heap again. Hold raises the percentage
// after each cycle so that the next waits for at least a floor of new
// allocation: with a small live heap the cycles are fewer and the
// resident memory at most the floor larger; once the live heap is large,
// the percentage is the process's own again.
package heapfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Percent is the collector's percentage that lets the heap grow by at
// least floor bytes beyond live before the next cycle, and never less
// than base (the process's own). It is base when base turns the
// collector off (negative) or live is unknown.
func Percent(live, floor int64, base int) int {
	if base < 0 || live <= 0 || floor <= 0 {
		return base
	}
	p := (floor*100 + live - 1) / live // rounded up: the floor is a minimum
	return int(max(p, int64(base)))
}

// hold is one Hold: the percentage to restore, and whether stop ran
// (then a cycle's cleanup leaves the percentage alone).
type hold struct {
	mu      sync.Mutex
	stopped bool
	base    int
	floor   int64
	notify  func(percent int) // tests: told each percentage set
}

// Hold keeps at least floor bytes of allocation between two cycles of
// the collector, from the next cycle on, until stop. It does nothing
// when the GOGC environment variable is set: the operator's setting
// stands.
func Hold(floor int64) (stop func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	return start(floor, nil)
}

// start is Hold, telling notify of each percentage it sets.
func start(floor int64, notify func(int)) (stop func()) {
	h := &hold{base: percentNow(), floor: floor, notify: notify}
	h.mu.Lock()
	h.set(liveHeap())
	h.mu.Unlock()
	h.arm()
	return h.stop
}

// sentinel is an object nothing references, whose cleanup tells of the
// end of the cycle that found it; the pointer keeps it out of the tiny
// allocator, whose objects' cleanups may never run.
type sentinel struct {
	_ *int
	_ [8]byte
}

// arm asks for collected to run after the next cycle.
func (h *hold) arm() { runtime.AddCleanup(new(sentinel), (*hold).collected, h) }

// collected sets the percentage from the heap that survived the cycle,
// and re-arms, until stop.
func (h *hold) collected() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return
	}
	// Armed before the percentage is told: a cycle that follows the
	// telling must find the new sentinel.
	h.arm()
	h.set(liveHeap())
}

// set applies the percentage for live; h.mu is held.
func (h *hold) set(live int64) {
	p := Percent(live, h.floor, h.base)
	debug.SetGCPercent(p)
	if h.notify != nil {
		h.notify(p)
	}
}

func (h *hold) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return
	}
	h.stopped = true
	debug.SetGCPercent(h.base)
}

// percentNow is the collector's percentage in force (reading it through
// SetGCPercent would turn the collector off for a moment, and wait for a
// cycle in progress); -1 with the collector off.
func percentNow() int {
	p, ok := readMetric("/gc/gogc:percent")
	if !ok {
		return 100
	}
	return int(p)
}

// liveHeap is the heap the last cycle found live, in bytes; 0 before
// the first cycle.
func liveHeap() int64 {
	live, _ := readMetric("/gc/heap/live:bytes")
	return int64(live)
}

// readMetric reads one of the runtime's uint64 metrics.
func readMetric(name string) (uint64, bool) {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0, false
	}
	return s[0].Value.Uint64(), true
}
