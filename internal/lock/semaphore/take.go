package semaphore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
)

// sems implements Semaphores on one locker of the slots' namespace.
type sems struct {
	locker lock.Locker
	waits  lock.Locker // the waits' namespace (announce.go); nil for the file backend
	// announced counts this process's announcements alive (announce.go).
	announced atomic.Int32
	sizes     map[string]int
	names     []string // the resources, sorted
	q         queues
}

var _ Semaphores = (*sems)(nil)

func newSems(l lock.Locker, sizes map[string]int) *sems {
	m := make(map[string]int, len(sizes))
	for k, v := range sizes {
		m[k] = v
	}
	return &sems{locker: l, sizes: m, names: sortedNames(m), q: newQueues()}
}

// Take takes every slot req asks for, or none. A resource that fires of
// this process are waiting for counts as full, so that a newcomer never
// passes them (a heavy waiter would starve behind light ones).
func (s *sems) Take(ctx context.Context, req Request) (*Held, error) {
	uses, err := s.plan(req.Uses)
	if err != nil {
		return nil, err
	}
	return s.take(ctx, req.Holder, uses, nil)
}

// plan checks uses and merges them, sorted by resource name.
func (s *sems) plan(in []Use) ([]Use, error) {
	var uses []Use
	for _, u := range in {
		if _, ok := s.sizes[u.Resource]; !ok {
			return nil, fmt.Errorf("resource %q is not declared", u.Resource)
		}
		if u.Weight < 1 {
			return nil, fmt.Errorf("resource %q: weight %d is below 1", u.Resource, u.Weight)
		}
		i := slices.IndexFunc(uses, func(v Use) bool { return v.Resource == u.Resource })
		if i < 0 {
			uses = append(uses, u)
			continue
		}
		uses[i].Weight += u.Weight
	}
	for _, u := range uses {
		if n := s.sizes[u.Resource]; u.Weight > n {
			return nil, fmt.Errorf("resource %q: weight %d is above its %d slots", u.Resource, u.Weight, n)
		}
	}
	slices.SortFunc(uses, func(a, b Use) int { return strings.Compare(a.Resource, b.Resource) })
	return uses, nil
}

// take takes uses in order, or none: at the first resource that is full
// (or queued for by a fire of this process other than w) it releases what
// it took and returns that resource's *FullError.
func (s *sems) take(ctx context.Context, who run.Holder, uses []Use, w *waiter) (*Held, error) {
	h := &Held{}
	for _, u := range uses {
		if !s.q.mayTake(u.Resource, w) {
			_ = s.release(h)
			return nil, s.full(ctx, u.Resource)
		}
		holders, err := s.takeOne(ctx, who, u, h)
		if err != nil || len(holders) > 0 {
			_ = s.release(h)
			if err != nil {
				return nil, err
			}
			return nil, &FullError{Resource: u.Resource, Size: s.sizes[u.Resource], Holders: holders}
		}
	}
	return h, nil
}

// takeOne takes u.Weight free slots of u.Resource into h, in index
// order. When there are not so many, it returns the holders of the slots
// it found held.
func (s *sems) takeOne(ctx context.Context, who run.Holder, u Use, h *Held) ([]run.Holder, error) {
	got, n := 0, s.sizes[u.Resource]
	var holders []run.Holder
	for k := 0; k < n && got < u.Weight; k++ {
		g, err := s.locker.Acquire(ctx, lock.Request{Name: slotLock(u.Resource, k), Record: lock.Record{Holder: who}})
		var held *lock.HeldError
		switch {
		case errors.As(err, &held):
			holders = append(holders, s.settled(ctx, slotLock(u.Resource, k), held.Record.Holder))
			continue
		case err != nil:
			return nil, fmt.Errorf("resource %s: %w", u.Resource, err)
		}
		h.Slots = append(h.Slots, SlotName(u.Resource, k))
		h.Grants = append(h.Grants, g)
		got++
	}
	if got == u.Weight {
		return nil, nil
	}
	return holders, nil // every slot not taken is held: at least one
}

// settleWait bounds how long a full resource's reason waits for a holder
// that has its slot but no record of its own yet (an SQL holder between
// its lock and its record's commit reads as an unnamed, foreign one), and
// settlePoll is how often it looks again.
const (
	settleWait = 300 * time.Millisecond
	settlePoll = 30 * time.Millisecond
)

// settled is h, the holder a held slot named, or, when it named nobody
// (no job: a holder not yet recorded), the holder the slot's record names
// once it is written, within settleWait. A record that never comes is a
// holder outside cronvisor, as h says.
func (s *sems) settled(ctx context.Context, name string, h run.Holder) run.Holder {
	for deadline := time.Now().Add(settleWait); h.Job == "" && time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return h
		case <-time.After(settlePoll):
		}
		st, err := s.locker.Inspect(ctx, name)
		if err != nil || !st.Held {
			return h
		}
		if st.Record.Job != "" {
			return st.Record.Holder
		}
	}
	return h
}

// full is the *FullError of res as it stands: the holders of its held
// slots (none when the slots are free but fires of this process wait
// for them).
func (s *sems) full(ctx context.Context, res string) *FullError {
	e := &FullError{Resource: res, Size: s.sizes[res]}
	for k := range e.Size {
		if st, err := s.locker.Inspect(ctx, slotLock(res, k)); err == nil && st.Held {
			e.Holders = append(e.Holders, s.settled(ctx, slotLock(res, k), st.Record.Holder))
		}
	}
	return e
}

// Release lets go of h's slots, last taken first, and wakes this
// process's waiters. Each lease's Release is idempotent, so is this.
func (s *sems) Release(h *Held) error {
	err := s.release(h)
	s.q.wake()
	return err
}

func (s *sems) release(h *Held) error {
	if h == nil {
		return nil
	}
	var errs []error
	for i := len(h.Grants) - 1; i >= 0; i-- {
		if err := h.Grants[i].Release(); err != nil {
			errs = append(errs, fmt.Errorf("release %s: %w", h.Slots[i], err))
		}
	}
	return errors.Join(errs...)
}

// SetRun names the run (a retry's run id) and its process in each
// slot's record.
func (s *sems) SetRun(h *Held, runID string, pid int) error {
	var errs []error
	for i, g := range h.Grants {
		if err := g.SetRun(runID, pid); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", h.Slots[i], err))
		}
	}
	return errors.Join(errs...)
}
