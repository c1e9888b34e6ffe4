package sql

import (
	"context"
	"fmt"
	"sync"
	"time"

	"cronvisor/internal/lock"
)

// A slot's outcome whose write failed (the lock's connection died with
// the run's end, the server is restarting) is retried on the pool in the
// background, so that the ledger's row does not stay "running" for a run
// that ended. The retries are bounded: past outcomeRetryFor the server has
// been away so long that the row is left as it is (the run's record in
// history still says how it ended).
const (
	outcomeRetryFirst = 500 * time.Millisecond
	outcomeRetryMax   = 5 * time.Second
	outcomeRetryFor   = 10 * time.Minute
)

// slotOutcome is the write of one claimed slot's outcome.
type slotOutcome struct {
	name, full, job string // the lock's name, with its prefix, and the job
	slot, fence     int64
	outcome, runID  string
	until           time.Time // the retries' end
}

// writeOutcome sets o's row on q: the row of the slot its lease claimed,
// found by its fencing token.
func (l *sqlLocker) writeOutcome(ctx context.Context, q querier, o slotOutcome) error {
	ctx, cancel := context.WithTimeout(ctx, lock.OpTimeout)
	defer cancel()
	_, err := q.ExecContext(ctx, l.d.rebind(`UPDATE cronvisor_slots SET outcome = ?, run_id = ?
		WHERE name = ? AND job = ? AND slot_ns = ? AND fencing_token = ?`),
		o.outcome, o.runID, o.full, o.job, o.slot, o.fence)
	if err != nil {
		return l.wrap(context.Background(), fmt.Sprintf("lock %q: set the slot's outcome", o.name), err)
	}
	return nil
}

// outcomeRetrier holds the outcomes whose write failed, and the one
// goroutine that retries them while any is pending; the locker's Close
// stops it and waits for it.
type outcomeRetrier struct {
	mu      sync.Mutex
	pending []slotOutcome
	running bool
	closed  bool
	stop    chan struct{}
	wg      sync.WaitGroup
}

func newOutcomeRetrier() *outcomeRetrier { return &outcomeRetrier{stop: make(chan struct{})} }

// add queues o and starts the goroutine if none runs; false once closed.
func (r *outcomeRetrier) add(l *sqlLocker, o slotOutcome) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.pending = append(r.pending, o)
	if !r.running {
		r.running = true
		r.wg.Go(func() { r.loop(l) })
	}
	return true
}

// close stops the goroutine and drops what is pending.
func (r *outcomeRetrier) close() {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.stop)
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// loop retries the pending outcomes, backing off from outcomeRetryFirst
// to outcomeRetryMax, until none is left (written or past its bound).
func (r *outcomeRetrier) loop(l *sqlLocker) {
	wait := outcomeRetryFirst
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		if !r.round(l) {
			return
		}
		wait = min(2*wait, outcomeRetryMax)
		t.Reset(wait)
	}
}

// round tries each pending outcome once; it returns whether any is left,
// and marks the goroutine ended when none is (under the same lock as add,
// so that an outcome added meanwhile starts a new one).
func (r *outcomeRetrier) round(l *sqlLocker) bool {
	r.mu.Lock()
	todo := r.pending
	r.pending = nil
	r.mu.Unlock()
	var left []slotOutcome
	now := time.Now()
	for _, o := range todo {
		if err := l.writeOutcome(context.Background(), l.db, o); err != nil && now.Before(o.until) {
			left = append(left, o)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = append(left, r.pending...)
	if len(r.pending) == 0 {
		r.running = false
		return false
	}
	return true
}
