package history

import (
	"fmt"
	"slices"
	"time"
)

// A batch that follows another and already has burstSize writes, or
// follows it while burstStarts runs are about to start, waits burstGather
// for more: the burst's forks then compete with fewer transactions (each
// pays SQLite's page writes and an fsync, whatever its size). Fewer writes
// commit at once: a few runs ending and starting back to back wait for
// every commit, and must not wait longer (BenchmarkGuardedRuns).
//
// burstStarts is 3: two runs looping back to back are at most 2 pending
// starts, and must not wait; from 3 on, a commit's writes are coming from
// a burst.
const (
	burstSize   = 8
	burstStarts = 3
	burstGather = 10 * time.Millisecond
)

// startLinger is how long a start covered by its lock record waits for
// its run's end before it is committed alone (see Writer.Started): long
// enough for the many cron jobs that run for milliseconds, short enough
// that `history` shows a longer run as running at once.
const startLinger = 50 * time.Millisecond

// loop is the Writer's goroutine, the only one that commits: it commits
// the queue whenever it has writes, retries the held ones every retryEvery
// while the store fails (and sleeps while it works: an idle daemon wakes
// for nothing), and on Close commits what is queued, tries the held
// writes once more and returns.
func (w *Writer) loop() {
	defer close(w.loopDone)
	var ticker *time.Ticker
	defer func() {
		if ticker != nil {
			ticker.Stop()
		}
	}()
	for {
		var tick <-chan time.Time
		switch degraded := w.Health().Degraded; {
		case degraded && ticker == nil:
			ticker = time.NewTicker(w.retryEvery)
			tick = ticker.C
		case degraded:
			tick = ticker.C
		case ticker != nil:
			ticker.Stop()
			ticker = nil
		}
		select {
		case <-w.stop:
			w.qmu.Lock()
			w.closed = true
			w.qmu.Unlock()
			w.flush()
			w.retry()
			return
		case <-w.wake:
			w.flush()
		case <-tick:
			w.retry()
		}
	}
}

// flush commits the queue, one transaction per batch, until it is empty
// or the store fails; then the batch and the queue are held for a retry.
// A batch that follows a commit during a burst waits burstGather first.
func (w *Writer) flush() {
	for follows := false; ; follows = true {
		w.qmu.Lock()
		n := len(w.queue)
		w.qmu.Unlock()
		if n == 0 {
			return
		}
		w.lingerStarts()
		if follows && (n >= burstSize || (w.pending != nil && w.pending() >= burstStarts)) {
			w.gather()
		}
		batch := w.takeBatch()
		if len(batch) == 0 {
			continue // only starts that may still wait for their end
		}
		if failed, cause := w.commit(batch); len(failed) > 0 {
			w.hold(failed, cause)
			return
		}
	}
}

// takeBatch takes the queued writes for the next transaction, all but the
// lingering starts young enough to wait on for their end: those stay
// queued, unless their end is queued too (the two fold into one row) or
// Close was called. A burst's starts then meet their ends as the calm
// moments do.
func (w *Writer) takeBatch() []*pendingWrite {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	now := time.Now()
	young := func(p *pendingWrite) bool { return p.linger && now.Sub(p.queued) < w.linger }
	if w.closed || w.stopping() || !slices.ContainsFunc(w.queue, young) {
		batch := w.queue
		w.queue = nil
		return batch
	}
	ending := map[string]bool{}
	for _, p := range w.queue {
		if p.w.Kind == WriteFinish {
			ending[p.w.Record.RunID] = true
		}
	}
	var batch, keep []*pendingWrite
	for _, p := range w.queue {
		if young(p) && !ending[p.w.Record.RunID] {
			keep = append(keep, p)
		} else {
			batch = append(batch, p)
		}
	}
	w.queue = keep
	return batch
}

// lingerStarts waits while every queued write is a lingering start, until
// the oldest has waited the linger, another write is queued, or Close is
// called.
func (w *Writer) lingerStarts() {
	for {
		w.qmu.Lock()
		oldest, all := lingering(w.queue)
		w.qmu.Unlock()
		wait := time.Until(oldest.Add(w.linger))
		if !all || wait <= 0 {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-w.wake: // a write came: look again
		case <-w.stop:
		}
		t.Stop()
		if w.stopping() {
			return
		}
	}
}

// stopping tells whether Close has been called.
func (w *Writer) stopping() bool {
	select {
	case <-w.stop:
		return true
	default:
		return false
	}
}

// lingering reports whether queue holds only lingering starts, and when
// the oldest was queued.
func lingering(queue []*pendingWrite) (oldest time.Time, all bool) {
	for i, p := range queue {
		if !p.linger {
			return time.Time{}, false
		}
		if i == 0 || p.queued.Before(oldest) {
			oldest = p.queued
		}
	}
	return oldest, len(queue) > 0
}

// gather waits burstGather for more writes to join the next batch, less
// if Close is called meanwhile.
func (w *Writer) gather() {
	t := time.NewTimer(burstGather)
	defer t.Stop()
	select {
	case <-t.C:
	case <-w.stop:
	}
}

// Close stops the Writer's goroutine once it has committed what is queued
// and tried the held writes once more, and reports what could not be
// written: those records are lost with the process. Writes after Close are
// refused and counted lost.
func (w *Writer) Close() error {
	w.closeOnce.Do(func() {
		close(w.stop)
		<-w.loopDone
	})
	h := w.Health()
	w.qmu.Lock()
	spooled := 0
	for _, p := range append(w.held, w.queue...) {
		if p.spooled {
			spooled++
		}
	}
	if w.spool != nil {
		_ = w.spool.Close(h.Waiting > 0) // a kept spool is the next process's to adopt
		w.spool = nil
	}
	if w.adopted != nil && w.adoptedLeft > 0 {
		w.adopted.Release()
	}
	w.qmu.Unlock()
	if spooled > 0 {
		w.rep.log.Warn("history records left in the spool at exit; the next supervisor writes them",
			"records", spooled, "reason", h.Reason)
	}
	if lost := h.Waiting - spooled; lost > 0 {
		err := fmt.Errorf("history: %d records not written at exit: %s", lost, h.Reason)
		w.rep.log.Error("history records lost at exit", "records", lost, "reason", h.Reason)
		return err
	}
	return nil
}
