package semaphore

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"

	"cronvisor/internal/lock"
)

// Waiters across hosts. A fire that waits for a resource is seen by every
// host sharing the backend: while it waits it holds a lock of the waits'
// namespace (the slots' prefix with "-wait" before its ':': Redis keys
// "cronvisor.resource-wait:lock:db.0", SQL lock names
// "cronvisor.resource-wait:db.0"), the first free index of the resource,
// whose record names the fire and, as its Slot, when it gives up. So a
// waiter is listed exactly as long as it waits, and one whose host died
// is gone when its lock is freed (its session ends, or its lease's ttl
// runs out). The file backend has no such namespace: its state dir is
// one host's, whose waiters its queues know.

// waitPrefix is what the waits' prefix ends with, in place of slotPrefix.
const waitPrefix = ".resource-wait:"

// maxAnnounced bounds the indexes a waiter tries, and announcedHere the
// announcements of one process alive at once (on SQL backends each holds
// a connection, as the waiting fire's lock does): past either a fire
// waits unannounced, seen by its own host only.
const (
	maxAnnounced  = 1000
	announcedHere = 32
)

// announced is a waiter's lock in the waits' namespace; nil when it is
// not announced (no namespace, too many here, or the backend failed).
type announced struct {
	g    lock.Grant
	here *atomic.Int32
}

// announce makes w, waiting for res, seen by every host (see above).
func (s *sems) announce(ctx context.Context, w *waiter, res string) *announced {
	if s.waits == nil {
		return nil
	}
	if s.announced.Add(1) > announcedHere {
		s.announced.Add(-1)
		return nil
	}
	rec := lock.Record{Holder: w.who, Slot: w.until}
	for k := range maxAnnounced {
		g, err := s.waits.Acquire(ctx, lock.Request{Name: slotLock(res, k), Record: rec})
		var held *lock.HeldError
		switch {
		case err == nil:
			return &announced{g: g, here: &s.announced}
		case !errors.As(err, &held):
			s.announced.Add(-1)
			return nil // unannounced: the wait itself goes on
		}
	}
	s.announced.Add(-1)
	return nil
}

// end lets go of the announcement; a nil one has nothing to let go of.
func (a *announced) end() {
	if a != nil {
		_ = a.g.Release()
		a.here.Add(-1)
	}
}

// announcedWaiters are the waiters of every host, by resource, from the
// waits' namespace: nil without one. Each is the fire its lock's record
// names, Until its Slot.
func (s *sems) announcedWaiters(ctx context.Context) (map[string][]Waiter, error) {
	if s.waits == nil {
		return nil, nil
	}
	all, err := s.waits.List(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string][]Waiter{}
	for _, st := range all {
		if !st.Held || st.Record.Foreign {
			continue
		}
		if res, ok := s.resourceOf(st.Name); ok {
			out[res] = append(out[res], Waiter{Holder: st.Record.Holder, Resource: res, Until: st.Record.Slot})
		}
	}
	return out, nil
}

// mergeWaiters is this process's waiters of a resource (first first)
// followed by the other hosts' in the order they began to wait; a fire
// in both lists is listed once, as this process knows it.
func mergeWaiters(local, all []Waiter) []Waiter {
	out := slices.Clone(local)
	mine := map[string]bool{}
	for _, w := range local {
		mine[w.RunID] = true
	}
	var others []Waiter
	for _, w := range all {
		if !mine[w.RunID] {
			others = append(others, w)
		}
	}
	slices.SortStableFunc(others, func(a, b Waiter) int { return a.Since.Compare(b.Since) })
	return append(out, others...)
}
