package runner

import (
	"sync"
	"sync/atomic"
)

// maxIdleWorkers bounds the goroutines kept waiting for the next fire.
const maxIdleWorkers = 64

// workers runs each fire on a goroutine that ran one before, when one is
// waiting: a fire's path (the lock, the launch, the records) grows a
// fresh goroutine's stack several times over, copying it each time, and
// a kept goroutine has its grown stack already. At most maxIdleWorkers
// wait; a worker ends when more wait, and every worker ends once stop
// is called and its fire is over.
type workers struct {
	work    chan func()
	quit    chan struct{}
	stopped sync.Once
	idle    atomic.Int32
}

func newWorkers() *workers {
	return &workers{work: make(chan func()), quit: make(chan struct{})}
}

// run runs f on a waiting worker, or on a new one.
func (w *workers) run(f func()) {
	select {
	case w.work <- f:
	default:
		go w.loop(f)
	}
}

func (w *workers) loop(f func()) {
	for {
		f()
		if w.idle.Add(1) > maxIdleWorkers {
			w.idle.Add(-1)
			return
		}
		select {
		case f = <-w.work:
			w.idle.Add(-1)
		case <-w.quit:
			w.idle.Add(-1)
			return
		}
	}
}

// stop ends the waiting workers, and each busy one once its fire is over.
func (w *workers) stop() { w.stopped.Do(func() { close(w.quit) }) }
