package journal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cronvisor/history"
)

// ErrBacklogFull refuses a run (see Admit): the records waiting for a
// failing store fill the journal's bound, and a run whose record could
// not be kept must not start.
var ErrBacklogFull = errors.New("history backlog full")

// Health is the state of the history path, for `status` and the console.
type Health struct {
	Degraded bool
	Since    time.Time // when writes began to fail
	Reason   string    // the latest failure
	Waiting  int       // records held in memory until the store takes them
	Lost     int       // records dropped since start-up: the backlog was full
}

// String is "history degraded since T: reason (...)", or "" when healthy.
func (h Health) String() string {
	if !h.Degraded && h.Lost == 0 {
		return ""
	}
	s := "history ok"
	if h.Degraded {
		s = fmt.Sprintf("history degraded since %s: %s (%d records waiting)",
			h.Since.Format(time.RFC3339), h.Reason, h.Waiting)
	}
	if h.Lost > 0 {
		s += fmt.Sprintf("; %d records lost to a full backlog", h.Lost)
	}
	return s
}

// pendingWrite is a write waiting for its commit.
type pendingWrite struct {
	w    history.Write
	done chan error // buffered: the committer never waits for the writer
	// behind: nobody waits; the committer reports an error as op.
	behind bool
	op     string
	// tried: a batch holding it failed, and may yet have committed it.
	tried bool
}

// settle tells the writer how its write ended: nil once it is committed or
// held for a retry, else the write's own error.
func (j *Journal) settle(p *pendingWrite, err error) {
	if p.tried && errors.Is(err, history.ErrDuplicate) {
		err = nil // an earlier attempt did commit it
	}
	switch {
	case !p.behind:
		p.done <- err
	case err != nil:
		j.rep.error(p.op, err)
	}
}

// Admit reserves room for a run's start and end records; the supervisor
// calls it before the run's exec. It refuses the run with ErrBacklogFull
// when the records waiting for a failing store would pass the bound, so
// that no run happens whose record could not be kept. The run's end
// releases the reservation.
func (j *Journal) Admit(runID string) error {
	j.qmu.Lock()
	defer j.qmu.Unlock()
	if n := len(j.queue) + len(j.held) + 2*len(j.admitted); n+2 > j.maxWaiting {
		return fmt.Errorf("%w: %d records wait for the store (%s)", ErrBacklogFull, n, j.reason)
	}
	j.admitted[runID] = struct{}{}
	return nil
}

func (j *Journal) release(runID string) {
	j.qmu.Lock()
	delete(j.admitted, runID)
	j.qmu.Unlock()
}

// Health reports the state of the history path.
func (j *Journal) Health() Health {
	j.qmu.Lock()
	defer j.qmu.Unlock()
	return Health{Degraded: j.degraded, Since: j.since, Reason: j.reason,
		Waiting: len(j.held) + len(j.queue), Lost: j.lost}
}

// Degrade marks the history path degraded before any write failed (the
// store could not be opened at start-up).
func (j *Journal) Degrade(cause error) {
	j.qmu.Lock()
	defer j.qmu.Unlock()
	j.degradeLocked(cause)
}

// degradeLocked records the failure; the first one since writes last
// succeeded starts the degraded period.
func (j *Journal) degradeLocked(cause error) {
	if !j.degraded {
		j.degraded, j.since = true, time.Now()
		select { // wake the retry loop
		case j.kick <- struct{}{}:
		default:
		}
	}
	j.reason = cause.Error()
	j.rep.degraded(cause, len(j.held)+len(j.queue))
}

// enqueue queues p; if no commit is in progress, it commits the queue,
// in this goroutine when lead is true, else in a new one. While the store
// fails, p joins the held writes instead, which the retry loop writes;
// a record without a reservation (a skip, a fire refused before its run)
// that does not fit the bound is lost, counted and reported.
func (j *Journal) enqueue(p *pendingWrite, lead bool) {
	j.qmu.Lock()
	_, reserved := j.admitted[p.w.Record.RunID]
	if !reserved && len(j.queue)+len(j.held)+2*len(j.admitted)+1 > j.maxWaiting {
		j.lost++
		j.qmu.Unlock()
		j.settle(p, fmt.Errorf("%w: %s/%s not recorded", ErrBacklogFull, p.w.Record.Job, p.w.Record.RunID))
		return
	}
	if j.degraded {
		keepLocked(p)
		j.held = append(j.held, p)
		j.qmu.Unlock()
		return
	}
	j.queue = append(j.queue, p)
	first := !j.flushing
	j.flushing = true
	j.qmu.Unlock()
	switch {
	case first && lead:
		j.flush()
	case first:
		go j.flush()
	}
}

// commit applies batch and settles the writes that committed or failed in
// themselves; it returns the ones that failed because the store did, and
// why.
func (j *Journal) commit(batch []*pendingWrite) (failed []*pendingWrite, cause error) {
	writes := make([]history.Write, len(batch))
	for i, p := range batch {
		writes[i] = p.w
	}
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	errs := j.store.Apply(ctx, writes)
	cancel()
	for i, p := range batch {
		err := errs[i]
		if err == nil || errors.Is(err, history.ErrBadRecord) || errors.Is(err, history.ErrDuplicate) {
			j.settle(p, err)
			continue
		}
		p.tried = true
		failed, cause = append(failed, p), err
	}
	return failed, cause
}

// hold keeps writes that the store failed, ahead of those queued since,
// and settles their writers: a held record is kept, not lost. The queue
// goes to the held writes too, in order; no commit is in progress after.
func (j *Journal) hold(failed []*pendingWrite, cause error) {
	j.qmu.Lock()
	defer j.qmu.Unlock()
	for _, p := range failed {
		keepLocked(p)
	}
	for _, p := range j.queue {
		keepLocked(p)
	}
	j.held = append(append(failed, j.held...), j.queue...)
	j.queue = nil
	j.flushing = false
	j.degradeLocked(cause)
}

// keepLocked settles a write that is held: its writer goes on, and the
// retry loop reports its errors from now on.
func keepLocked(p *pendingWrite) {
	if !p.behind {
		p.done <- nil
		p.behind = true
	}
}

// retryBatch bounds one retry's transaction.
const retryBatch = 500

// retry writes the held records, oldest first, until none is left or the
// store fails again. It runs on the retry loop only.
func (j *Journal) retry() {
	for {
		j.qmu.Lock()
		if !j.degraded {
			j.qmu.Unlock()
			return
		}
		if len(j.held) == 0 {
			j.qmu.Unlock()
			// Degraded with nothing held: the store could not be
			// opened (Degrade); it has recovered once it opens.
			if err := j.store.Writable(); err != nil {
				j.qmu.Lock()
				j.degradeLocked(err)
				j.qmu.Unlock()
				return
			}
			j.qmu.Lock()
			if len(j.held) == 0 {
				j.recoveredLocked()
			}
			j.qmu.Unlock()
			continue
		}
		batch := append([]*pendingWrite(nil), j.held[:min(len(j.held), retryBatch)]...)
		j.qmu.Unlock()
		failed, cause := j.commit(batch)
		j.qmu.Lock()
		if len(failed) > 0 {
			j.degradeLocked(cause)
			j.qmu.Unlock()
			return
		}
		j.held = j.held[len(batch):]
		j.qmu.Unlock()
	}
}

// recoveredLocked ends the degraded period.
func (j *Journal) recoveredLocked() {
	j.rep.recovered(time.Since(j.since), j.lost)
	j.degraded, j.reason = false, ""
}

// retryEvery is how often held records are tried again: soon enough that a
// freed disk shows in history within seconds, rarely enough that a failing
// store costs nothing.
const retryEvery = time.Second

// retryLoop writes held records whenever the store takes them again. It
// sleeps on kick while the store works: an idle daemon wakes for nothing.
func (j *Journal) retryLoop() {
	defer close(j.loopDone)
	for {
		select {
		case <-j.stop:
			return
		case <-j.kick:
		}
		t := time.NewTicker(j.retryEvery)
		for j.Health().Degraded {
			select {
			case <-j.stop:
				t.Stop()
				return
			case <-t.C:
				j.retry()
			}
		}
		t.Stop()
	}
}

// Close stops the retry loop after one last attempt to write what is held,
// and reports what could not be written: those records are lost with the
// process.
func (j *Journal) Close() error {
	j.closeOnce.Do(func() {
		close(j.stop)
		<-j.loopDone
		j.retry()
	})
	if h := j.Health(); h.Waiting > 0 {
		err := fmt.Errorf("history: %d records not written at exit: %s", h.Waiting, h.Reason)
		j.rep.log.Error("history records lost at exit", "records", h.Waiting, "reason", h.Reason)
		return err
	}
	return nil
}
