package semaphore

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cronvisor/internal/harness/locktest"
)

// Many fires of two supervisors take and release a size-2 resource over
// and over: never more than two hold it at once, and all of them get
// their turns within the bound.
func TestNeverMoreHoldersThanSlots(t *testing.T) {
	const fires, rounds = 6, 15
	eachBackend(t, func(t *testing.T, open func(map[string]int) Semaphores) {
		ctx := locktest.Context(t, 60*time.Second)
		sups := []Semaphores{open(map[string]int{"db": 2}), open(map[string]int{"db": 2})}
		var inside, most, took atomic.Int64
		var wg sync.WaitGroup
		for i := range fires {
			s := sups[i%2]
			wg.Go(func() {
				for range rounds {
					h, err := s.Wait(ctx, req("job", "db", 1), time.Now().Add(50*time.Second))
					if err != nil {
						t.Errorf("Wait: %v", err)
						return
					}
					n := inside.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					time.Sleep(time.Millisecond)
					inside.Add(-1)
					took.Add(1)
					if err := s.Release(h); err != nil {
						t.Errorf("Release: %v", err)
					}
				}
			})
		}
		wg.Wait()
		if m := most.Load(); m > 2 || m < 1 {
			t.Errorf("at most %d holders at once, want 1..2", m)
		}
		if n := took.Load(); n != fires*rounds {
			t.Errorf("%d takes, want %d", n, fires*rounds)
		}
	})
}
