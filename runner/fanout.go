package runner

import (
	"sync"

	"cronvisor/internal/base/run"
)

// Fanout hands every event to each listener in the order they were added,
// on the emitting goroutine. Its listeners are observers that may lose
// events (the log, the service's status, console clients): history is not
// one of them, the Supervisor records through its Recorder. A run's
// goroutine emits, some events with the run's lock held, so a listener
// never blocks: one that may be slow buffers and coalesces on its side.
type Fanout struct {
	mu        sync.RWMutex
	listeners []func(run.Event)
}

// Listen adds a listener.
func (f *Fanout) Listen(l func(run.Event)) {
	f.mu.Lock()
	f.listeners = append(f.listeners, l)
	f.mu.Unlock()
}

// Emit delivers ev to every listener.
func (f *Fanout) Emit(ev run.Event) {
	f.mu.RLock()
	ls := f.listeners
	f.mu.RUnlock()
	for _, l := range ls {
		l(ev)
	}
}
