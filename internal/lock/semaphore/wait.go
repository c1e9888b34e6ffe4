package semaphore

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"cronvisor/internal/base/run"
)

// Polling: holders in other processes cannot tell a waiter that they
// let go, so the first waiter of a resource tries again every pollEvery
// plus up to pollJitter (the jitter keeps the waiters of several hosts
// from asking in step). A release in this process wakes its waiters at
// once.
const (
	pollEvery  = 50 * time.Millisecond
	pollJitter = 50 * time.Millisecond
)

// waiter is one Wait call: who waits, for which uses, until when.
type waiter struct {
	who   run.Holder
	uses  []Use
	until time.Time
}

// queues are this process's waiters, in the order they began to wait,
// per resource. A waiter is added to the queue of every resource it uses
// at once, under one lock, so any two waiters stand in the same order in
// every queue they share, and no two can keep each other waiting.
type queues struct {
	mu      sync.Mutex
	by      map[string][]*waiter
	changed chan struct{} // closed and replaced by wake
}

func newQueues() queues { return queues{by: map[string][]*waiter{}, changed: make(chan struct{})} }

func (q *queues) add(w *waiter) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, u := range w.uses {
		q.by[u.Resource] = append(q.by[u.Resource], w)
	}
}

// remove takes w out of its queues and wakes the others: the next may
// now be first.
func (q *queues) remove(w *waiter) {
	q.mu.Lock()
	for _, u := range w.uses {
		l := slices.DeleteFunc(q.by[u.Resource], func(v *waiter) bool { return v == w })
		if len(l) == 0 {
			delete(q.by, u.Resource)
			continue
		}
		q.by[u.Resource] = l
	}
	q.mu.Unlock()
	q.wake()
}

// mayTake reports whether w (nil: a fire that does not wait) may take
// slots of res now: nobody waits for it, or w is the first who does.
func (q *queues) mayTake(res string, w *waiter) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	l := q.by[res]
	return len(l) == 0 || l[0] == w
}

// blocker is the first resource of w's that another waiter is ahead of
// w for; "" when w is first for all of them.
func (q *queues) blocker(w *waiter) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, u := range w.uses {
		if l := q.by[u.Resource]; len(l) > 0 && l[0] != w {
			return u.Resource
		}
	}
	return ""
}

// signal is the channel the next wake closes.
func (q *queues) signal() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.changed
}

// wake tells every waiter that something changed here.
func (q *queues) wake() {
	q.mu.Lock()
	defer q.mu.Unlock()
	close(q.changed)
	q.changed = make(chan struct{})
}

// waiters are the waiters of res, first first.
func (q *queues) waiters(res string) []Waiter {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []Waiter
	for _, w := range q.by[res] {
		out = append(out, Waiter{Holder: w.who, Resource: res, Until: w.until})
	}
	return out
}

// Wait takes req's slots as Take does, waiting up to until for them: in
// turn among this process's fires (a waiter tries only when it is first
// in the queue of each resource it uses), polling while it is first.
func (s *sems) Wait(ctx context.Context, req Request, until time.Time) (*Held, error) {
	uses, err := s.plan(req.Uses)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	w := &waiter{who: req.Holder, uses: uses, until: until}
	s.q.add(w)
	defer s.q.remove(w)
	var shown *announced
	defer func() { shown.end() }()
	for {
		woken := s.q.signal() // before trying: a wake meanwhile is not lost
		var full *FullError
		res := s.q.blocker(w)
		if res == "" {
			h, err := s.take(ctx, req.Holder, uses, w)
			if !errors.As(err, &full) {
				return h, err
			}
			res = full.Resource
		}
		if shown == nil {
			shown = s.announce(ctx, w, res)
		}
		left := time.Until(until)
		if left <= 0 {
			return nil, s.gaveUp(ctx, w, full, time.Since(start))
		}
		wait := left
		if full != nil { // first in line: poll
			wait = min(left, pollEvery+rand.N(pollJitter))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-woken:
			t.Stop()
		case <-t.C:
		}
	}
}

// gaveUp is the *FullError of a wait that ran out: the last attempt's,
// or for a waiter still behind others, its first resource they wait for.
func (s *sems) gaveUp(ctx context.Context, w *waiter, last *FullError, waited time.Duration) error {
	if last == nil {
		res := s.q.blocker(w)
		if res == "" {
			res = w.uses[0].Resource
		}
		last = s.full(ctx, res)
	}
	last.Waited = max(waited, time.Nanosecond)
	return last
}
