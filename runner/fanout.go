package runner

import "sync"

// Fanout hands every event to each listener in the order they were added.
// Listeners run synchronously on the emitting goroutine: the history sink
// must not lose events. Listeners that may be slow (a UI, a socket client)
// buffer and coalesce on their side, never blocking here.
type Fanout struct {
	mu        sync.RWMutex
	listeners []func(Event)
}

// Listen adds a listener.
func (f *Fanout) Listen(l func(Event)) {
	f.mu.Lock()
	f.listeners = append(f.listeners, l)
	f.mu.Unlock()
}

// Emit delivers ev to every listener.
func (f *Fanout) Emit(ev Event) {
	f.mu.RLock()
	ls := f.listeners
	f.mu.RUnlock()
	for _, l := range ls {
		l(ev)
	}
}
