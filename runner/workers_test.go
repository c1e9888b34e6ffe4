package runner

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestWorkersReuseAWaitingGoroutine: fires handed over one after the
// other, each once the last is over, run on the worker that waits, not
// on a new goroutine each. (A fire handed over in the instant between a
// worker's end of its fire and its wait gets a new goroutine: the test
// allows a few.)
func TestWorkersReuseAWaitingGoroutine(t *testing.T) {
	w := newWorkers()
	defer w.stop()
	const fires = 20
	seen := map[uint64]bool{}
	for range fires {
		ids := make(chan uint64, 1)
		w.run(func() { ids <- goroutineID() })
		seen[<-ids] = true
		waitIdle(t, w, int32(len(seen)))
	}
	if len(seen) > fires/4 {
		t.Fatalf("%d fires one after another ran on %d goroutines, want the waiting worker reused", fires, len(seen))
	}
}

// TestWorkersRunConcurrentFiresAtOnce: fires handed over while every
// worker is busy do not wait for one: each gets a goroutine.
func TestWorkersRunConcurrentFiresAtOnce(t *testing.T) {
	w := newWorkers()
	defer w.stop()
	blocking(t, w, 10).release()
}

// TestWorkersBoundedAndStopped: no more than maxIdleWorkers wait, and
// stop ends them all, a busy one once its fire is over.
func TestWorkersBoundedAndStopped(t *testing.T) {
	before := runtime.NumGoroutine()
	w := newWorkers()
	n := maxIdleWorkers + 20
	blocking(t, w, n).release()
	waitIdle(t, w, maxIdleWorkers)
	time.Sleep(20 * time.Millisecond)
	if got := w.idle.Load(); got != maxIdleWorkers {
		t.Fatalf("%d workers wait after %d fires at once, want the bound %d", got, n, maxIdleWorkers)
	}
	busy := make(chan struct{})
	var last sync.WaitGroup
	last.Add(1)
	w.run(func() { defer last.Done(); <-busy })
	w.stop()
	close(busy)
	last.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines 5 s after stop, %d before the workers", runtime.NumGoroutine(), before)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := w.idle.Load(); got != 0 {
		t.Fatalf("%d workers counted idle after stop, want 0", got)
	}
}

// blockingFires are fires that wait for their release.
type blockingFires struct {
	open chan struct{}
	done sync.WaitGroup
}

// blocking hands w n fires that block until released, and waits up to
// 5 s for all of them to have started.
func blocking(t *testing.T, w *workers, n int) *blockingFires {
	t.Helper()
	b := &blockingFires{open: make(chan struct{})}
	var started sync.WaitGroup
	started.Add(n)
	b.done.Add(n)
	for range n {
		w.run(func() { defer b.done.Done(); started.Done(); <-b.open })
	}
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	select {
	case <-all:
	case <-time.After(5 * time.Second):
		close(b.open)
		t.Fatalf("%d blocking fires did not all start within 5 s", n)
	}
	return b
}

// release lets the fires end, and waits for them.
func (b *blockingFires) release() {
	close(b.open)
	b.done.Wait()
}

// waitIdle waits until want workers wait for a fire.
func waitIdle(t *testing.T, w *workers, want int32) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if w.idle.Load() == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d workers wait after 5 s, want %d", w.idle.Load(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// goroutineID is the calling goroutine's id, from its stack's header.
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	var id uint64
	for _, c := range b[len("goroutine "):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}
