package daemon

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// startupHeapLimit is the heap at which the start-up's first collection
// runs while PauseGC holds the collector off.
const startupHeapLimit = 512 << 20

// PauseGC turns the collector off until the returned func turns it back
// on; call it before loading jobs.yaml and resume after New. Loading and
// starting allocate far more than survives (the YAML parser's nodes, the
// history's rows): collections while that grows would each mark the jobs
// decoded so far again; with the collector off, the FreeOSMemory at the
// end of New marks only what survives.
//
// Off means up to a memory limit, startupHeapLimit at first. A limit
// below the live heap makes the runtime collect back to back, so after
// each collection the limit is raised to twice the heap that survived:
// with jobs whose live heap alone outgrows the first limit, start-up
// collects a few times as the heap doubles, as the default GOGC would.
func PauseGC() (resume func()) {
	return pauseGC(startupHeapLimit, nil)
}

// gcPause is one PauseGC: the settings to restore, and whether they have
// been (collected then leaves the limit alone).
type gcPause struct {
	mu      sync.Mutex
	resumed bool
	percent int
	limit   int64
	start   int64
	notify  func(limit int64) // tests: called with each limit set after a collection
}

// pauseGC is PauseGC with the first limit start, notify told of every
// limit it sets after a collection.
func pauseGC(start int64, notify func(int64)) (resume func()) {
	p := &gcPause{start: start, notify: notify}
	p.percent = debug.SetGCPercent(-1)
	p.limit = debug.SetMemoryLimit(start)
	p.arm()
	return p.resume
}

// sentinel is an object nothing references, whose cleanup tells of the
// end of the collection that found it; the pointer keeps it out of the
// tiny allocator, whose objects' cleanups may never run.
type sentinel struct {
	_ *int
	_ [8]byte
}

// arm asks for collected to run after the next collection.
func (p *gcPause) arm() {
	runtime.AddCleanup(new(sentinel), (*gcPause).collected, p)
}

// collected raises the limit to twice the live heap, and re-arms, until
// the pause is resumed.
func (p *gcPause) collected() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.resumed {
		return
	}
	limit := max(p.start, nextLimit())
	debug.SetMemoryLimit(limit)
	if p.notify != nil {
		p.notify(limit)
	}
	p.arm()
}

func (p *gcPause) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.resumed {
		return
	}
	p.resumed = true
	debug.SetGCPercent(p.percent)
	debug.SetMemoryLimit(p.limit)
}

// heapClasses are the runtime's memory classes that hold the heap's
// objects and its free and released pages; the rest (stacks, the
// runtime's own structures) counts towards a memory limit beside them.
var heapClasses = []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes", "/memory/classes/heap/released:bytes"}

// nextLimit is twice the live heap, plus the memory that is not heap.
func nextLimit() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"}}
	for _, c := range heapClasses {
		s = append(s, metrics.Sample{Name: c})
	}
	metrics.Read(s)
	other := s[1].Value.Uint64()
	for _, c := range s[2:] {
		other -= c.Value.Uint64()
	}
	return 2*int64(s[0].Value.Uint64()) + int64(other)
}
