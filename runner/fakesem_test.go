package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/file"
	"cronvisor/internal/lock/semaphore"
)

// fakeSems is semaphore.Semaphores in memory, for the runner's tests:
// each slot's holder in a table, and, with dir, a file per slot opened
// read-only as a file backend's grant is (the run's fds 5, 6, ...). It
// checks what the runner must never do: wait while holding a slot, or
// release slots it does not hold.
type fakeSems struct {
	mu      sync.Mutex
	dir     string
	sizes   map[string]int
	holders map[string][]*run.Holder // resource -> holder of each slot, nil: free
	pids    map[string]int           // slot -> SetRun's pid
	runIDs  map[string]string        // slot -> SetRun's run id
	named   []string                 // every SetRun's run id, in order
	takes   int                      // successful Takes and Waits
	waits   int                      // Wait calls
	errs    []string                 // misuses seen
	handoff bool                     // grants carry a Redis-like Handoff
	lost    chan struct{}            // non-nil: every grant's Lost
}

func newFakeSems(dir string, sizes map[string]int) *fakeSems {
	f := &fakeSems{dir: dir, sizes: sizes, holders: map[string][]*run.Holder{}, pids: map[string]int{}, runIDs: map[string]string{}}
	for name, n := range sizes {
		f.holders[name] = make([]*run.Holder, n)
	}
	return f
}

// hold makes h the holder of resource's slot k, as another host's run.
func (f *fakeSems) hold(resource string, k int, h *run.Holder) {
	f.mu.Lock()
	f.holders[resource][k] = h
	f.mu.Unlock()
}

func (f *fakeSems) Take(_ context.Context, req semaphore.Request) (*semaphore.Held, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	uses := slices.Clone(req.Uses)
	slices.SortFunc(uses, func(a, b semaphore.Use) int { return strings.Compare(a.Resource, b.Resource) })
	h := &semaphore.Held{}
	for _, u := range uses {
		slots := f.holders[u.Resource]
		took := 0
		for k := 0; k < len(slots) && took < u.Weight; k++ {
			if slots[k] == nil {
				holder := req.Holder
				slots[k] = &holder
				h.Slots = append(h.Slots, fmt.Sprintf("%s/%d", u.Resource, k))
				took++
			}
		}
		if took < u.Weight {
			f.free(h)
			full := &semaphore.FullError{Resource: u.Resource, Size: len(slots)}
			for _, s := range slots {
				if s != nil {
					full.Holders = append(full.Holders, *s)
				}
			}
			return nil, full
		}
	}
	for _, name := range h.Slots {
		g := lock.Grant{}
		if f.dir != "" {
			file, err := os.Open(f.slotFile(name))
			if err != nil {
				f.free(h)
				return nil, err
			}
			g.File = file
		}
		if f.lost != nil {
			g.Lost = f.lost
		}
		if f.handoff {
			g.Handoff, g.MinLifeLeft = []byte(name), 3*time.Second
		}
		h.Grants = append(h.Grants, g)
	}
	f.takes++
	return h, nil
}

// slotFile is a slot's file under dir, made when first asked for.
func (f *fakeSems) slotFile(slot string) string {
	p := filepath.Join(f.dir, strings.ReplaceAll(slot, "/", "."))
	_ = os.WriteFile(p, nil, 0o600)
	return p
}

// free clears h's slots; f.mu is held.
func (f *fakeSems) free(h *semaphore.Held) {
	for _, name := range h.Slots {
		i := strings.LastIndexByte(name, '/')
		res, k := name[:i], 0
		_, _ = fmt.Sscan(name[i+1:], &k)
		if f.holders[res][k] == nil {
			f.errs = append(f.errs, "released free slot "+name)
		}
		f.holders[res][k] = nil
		delete(f.pids, name)
		delete(f.runIDs, name)
	}
}

func (f *fakeSems) Wait(ctx context.Context, req semaphore.Request, until time.Time) (*semaphore.Held, error) {
	f.mu.Lock()
	f.waits++
	f.mu.Unlock()
	began := time.Now()
	for {
		h, err := f.Take(ctx, req)
		if err == nil || !time.Now().Before(until) {
			if full, ok := err.(*semaphore.FullError); ok {
				full.Waited = time.Since(began)
			}
			return h, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

func (f *fakeSems) Release(h *semaphore.Held) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h.Slots == nil {
		return nil
	}
	f.free(h)
	for _, g := range h.Grants {
		if g.File != nil {
			g.File.Close()
		}
	}
	h.Slots, h.Grants = nil, nil
	return nil
}

func (f *fakeSems) SetRun(h *semaphore.Held, runID string, pid int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range h.Slots {
		f.pids[s], f.runIDs[s] = pid, runID
		f.named = append(f.named, runID)
	}
	return nil
}

func (f *fakeSems) List(context.Context) ([]semaphore.Resource, error) { return nil, nil }

// heldCount is how many slots are held, of every resource.
func (f *fakeSems) heldCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, slots := range f.holders {
		for _, s := range slots {
			if s != nil {
				n++
			}
		}
	}
	return n
}

// ordersSems is what TestOppositeOrders takes its slots from.
type ordersSems interface {
	semaphore.Semaphores
	heldCount() int
}

// fileSems are the real semaphores on the file backend (flock(2) on
// STATE_DIR/resources/NAME.K.lock), counted through List.
type fileSems struct{ semaphore.Semaphores }

func (f fileSems) heldCount() int {
	rs, err := f.List(context.Background())
	if err != nil {
		return -1
	}
	n := 0
	for _, r := range rs {
		n += r.HeldCount()
	}
	return n
}

// newOrdersSems is a and b of one slot each, on the file backend.
func newOrdersSems(t *testing.T) ordersSems {
	t.Helper()
	sems, err := semaphore.Open(file.Backend, lock.Settings{LocksDir: filepath.Join(t.TempDir(), "locks"), InRun: InRun},
		map[string]int{"a": 1, "b": 1})
	if err != nil {
		t.Fatal(err)
	}
	return fileSems{sems}
}
