package history

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrBacklogFull refuses a run (see Writer.Admit): the records waiting for
// a failing store fill the Writer's bound, and a run whose record could
// not be kept must not start.
var ErrBacklogFull = errors.New("history backlog full")

// ErrHeld says a record is not durable yet: the store fails, and the
// record waits in memory until it takes writes again.
var ErrHeld = errors.New("history record held in memory until the store takes writes again")

// errClosed refuses a write that comes after Close.
var errClosed = errors.New("history writer closed")

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
	w    Write
	done chan error // buffered: the committer never waits for the writer
	// behind: nobody waits; the committer reports an error as op.
	behind bool
	op     string
	// tried: a batch holding it failed, and may yet have committed it.
	tried bool
	// linger: a start that may wait up to startLinger for its run's end,
	// to go into the end's transaction (see Writer.Started).
	linger bool
	queued time.Time
	// spooled: the write is in a spool on disk (see Spool); adopted: in a
	// dead process's one.
	spooled, adopted bool
}

// settle tells the writer how its write ended: nil once it is committed,
// else the write's own error.
func (w *Writer) settle(p *pendingWrite, err error) {
	if p.tried && errors.Is(err, ErrDuplicate) {
		err = nil // an earlier attempt did commit it
	}
	if p.adopted {
		w.qmu.Lock()
		if w.adoptedLeft--; w.adoptedLeft == 0 {
			w.adopted.Done()
		}
		w.qmu.Unlock()
	}
	switch {
	case !p.behind:
		p.done <- err
	case err != nil:
		w.rep.error(p.op, err)
	}
}

// Admit reserves room for a run's start and end records; the supervisor
// calls it before the run's exec. It refuses the run with ErrBacklogFull
// when the records waiting for a failing store would pass the bound, so
// that no run happens whose record could not be kept. The run's end
// releases the reservation.
func (w *Writer) Admit(runID string) error {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	if n := len(w.queue) + len(w.held) + 2*len(w.admitted); n+2 > w.maxWaiting {
		return fmt.Errorf("%w: %d records wait for the store (%s)", ErrBacklogFull, n, w.reason)
	}
	w.admitted[runID] = struct{}{}
	return nil
}

// InFlight reports whether the run was admitted here and has not ended:
// a run of this process, whatever its lock record's times say (the
// recovery of dead supervisors' runs asks, see recovery.Config.Mine).
func (w *Writer) InFlight(runID string) bool {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	_, ok := w.admitted[runID]
	return ok
}

func (w *Writer) release(runID string) {
	w.qmu.Lock()
	delete(w.admitted, runID)
	w.qmu.Unlock()
}

// Health reports the state of the history path.
func (w *Writer) Health() Health {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	return Health{Degraded: w.degraded, Since: w.since, Reason: w.reason,
		Waiting: len(w.held) + len(w.queue), Lost: w.lost}
}

// Degrade marks the history path degraded before any write failed (the
// store could not be opened at start-up).
func (w *Writer) Degrade(cause error) {
	w.qmu.Lock()
	w.degradeLocked(cause)
	w.qmu.Unlock()
	w.kick()
}

// degradeLocked records the failure; the first one since writes last
// succeeded starts the degraded period.
func (w *Writer) degradeLocked(cause error) {
	if !w.degraded {
		w.degraded, w.since = true, time.Now()
	}
	w.reason = cause.Error()
	w.rep.degraded(cause, len(w.held)+len(w.queue))
}

// kick wakes the writer's goroutine; a wake-up already pending will do.
func (w *Writer) kick() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// enqueue queues p for the writer's goroutine. While the store fails, p
// joins the held writes instead, which the goroutine retries; a record
// without a reservation (a skip, a fire refused before its run) that does
// not fit the bound is lost, counted and reported.
func (w *Writer) enqueue(p *pendingWrite) {
	w.qmu.Lock()
	_, reserved := w.admitted[p.w.Record.RunID]
	switch {
	case w.closed:
		w.lost++
		w.qmu.Unlock()
		w.settle(p, fmt.Errorf("%w: %s/%s not recorded", errClosed, p.w.Record.Job, p.w.Record.RunID))
		return
	case !reserved && len(w.queue)+len(w.held)+2*len(w.admitted)+1 > w.maxWaiting:
		w.lost++
		w.qmu.Unlock()
		w.settle(p, fmt.Errorf("%w: %s/%s not recorded", ErrBacklogFull, p.w.Record.Job, p.w.Record.RunID))
		return
	case w.degraded:
		w.spoolLocked([]*pendingWrite{p})
		w.keepLocked(p)
		w.held = append(w.held, p)
		w.qmu.Unlock()
		return
	}
	p.queued = time.Now()
	w.queue = append(w.queue, p)
	w.qmu.Unlock()
	w.kick()
}

// commit applies batch and settles the writes that committed or failed in
// themselves; it returns the ones that failed because the store did, and
// why. A start folded into its end (see fold) shares its end's fate.
func (w *Writer) commit(batch []*pendingWrite) (failed []*pendingWrite, cause error) {
	applied, by := fold(batch)
	writes := make([]Write, len(applied))
	for i, p := range applied {
		writes[i] = p.w
	}
	// No deadline on the statements themselves: SQLite's busy_timeout
	// (busyTimeoutMS, as long as writeTimeout) bounds a wait for another
	// writer, and a run's end waits writeTimeout at most whatever the
	// commit does (WriteEnd). A context that can end costs, in the
	// driver, a goroutine and an interrupt handler per statement.
	errs := w.store.Apply(context.Background(), writes)
	for i, p := range batch {
		err := errs[by[i]]
		if err == nil || errors.Is(err, ErrBadRecord) || errors.Is(err, ErrDuplicate) {
			if applied[by[i]] != p {
				err = nil // folded: its fields went in with its end, which reports its own error
			}
			w.settle(p, err)
			continue
		}
		p.tried = true
		failed, cause = append(failed, p), err
	}
	return failed, cause
}

// hold keeps writes that the store failed, ahead of those queued since,
// and settles their writers: a held record is kept, not lost. The queue
// goes to the held writes too, in order.
func (w *Writer) hold(failed []*pendingWrite, cause error) {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	w.spoolLocked(slices.Concat(failed, w.queue)) // one fdatasync for both
	for _, p := range failed {
		w.keepLocked(p)
	}
	for _, p := range w.queue {
		w.keepLocked(p)
	}
	w.held = append(append(failed, w.held...), w.queue...)
	w.queue = nil
	w.degradeLocked(cause)
}

// keepLocked settles a write that is held: its writer goes on, told that
// the record is not durable yet, and the retries report its errors from
// now on.
func (w *Writer) keepLocked(p *pendingWrite) {
	if !p.behind {
		p.done <- fmt.Errorf("%w (%s)", ErrHeld, w.reason)
		p.behind = true
	}
}

// retryBatch bounds one retry's transaction.
const retryBatch = 500

// retry writes the held records, oldest first, until none is left or the
// store fails again.
func (w *Writer) retry() {
	for {
		w.qmu.Lock()
		if !w.degraded {
			w.qmu.Unlock()
			return
		}
		if len(w.held) == 0 {
			w.qmu.Unlock()
			// Degraded with nothing held: the store could not be
			// opened (Degrade); it has recovered once it opens.
			if err := w.store.Writable(); err != nil {
				w.qmu.Lock()
				w.degradeLocked(err)
				w.qmu.Unlock()
				return
			}
			w.qmu.Lock()
			if len(w.held) == 0 {
				w.recoveredLocked()
			}
			w.qmu.Unlock()
			continue
		}
		batch := append([]*pendingWrite(nil), w.held[:min(len(w.held), retryBatch)]...)
		w.qmu.Unlock()
		failed, cause := w.commit(batch)
		w.qmu.Lock()
		if len(failed) > 0 {
			w.degradeLocked(cause)
			w.qmu.Unlock()
			return
		}
		w.held = w.held[len(batch):]
		w.qmu.Unlock()
	}
}

// recoveredLocked ends the degraded period: every held write is in the
// store, and so is every spooled one.
func (w *Writer) recoveredLocked() {
	w.rep.recovered(time.Since(w.since), w.lost)
	w.degraded, w.reason = false, ""
	if w.spool != nil {
		if err := w.spool.Reset(); err != nil {
			w.rep.error("spool reset", err)
		}
	}
}

// spoolLocked writes to the spool those of ps that are not on disk yet,
// before keepLocked lets their runs go on (and release their locks). A
// spool that cannot take them (full, or a read-only state dir) leaves
// them in memory only, as without a spool; that is reported.
func (w *Writer) spoolLocked(ps []*pendingWrite) {
	if w.spool == nil {
		return
	}
	var todo []*pendingWrite
	var ws []Write
	for _, p := range ps {
		if !p.spooled {
			todo, ws = append(todo, p), append(ws, p.w)
		}
	}
	if len(ws) == 0 {
		return
	}
	if err := w.spool.Append(ws); err != nil {
		w.rep.error("spool", err)
		return
	}
	for _, p := range todo {
		p.spooled = true
	}
}

// fold takes out of batch each start whose run's end is in it too, and
// merges the start into the end, whose write then inserts the whole row:
// one insert where an insert and an update of the same row were (the
// end's write does what it does after a start committed in an earlier
// batch; merging again on a retry changes nothing). by[i] is the index in
// applied of the write that carries batch[i]: itself, or its end. A start
// whose merged end the store would refuse stays.
func fold(batch []*pendingWrite) (applied []*pendingWrite, by []int) {
	ends := map[string]int{} // run id -> index in batch of its end
	for i, p := range batch {
		if p.w.Kind == WriteFinish && p.w.Record.Outcome.Final() {
			ends[p.w.Record.RunID] = i
		}
	}
	applied, by = make([]*pendingWrite, 0, len(batch)), make([]int, len(batch))
	carried := map[int]int{} // index in batch of a folded start -> of its end
	for i, p := range batch {
		if e, ok := ends[p.w.Record.RunID]; ok && p.w.Kind == WriteStart {
			end := batch[e]
			if merged := merge(p.w.Record, end.w.Record); check(merged) == nil {
				end.w.Record = merged
				end.w.noStart = !p.tried
				carried[i] = e
				continue
			}
		}
		by[i] = len(applied)
		applied = append(applied, p)
	}
	for i, e := range carried {
		by[i] = by[e]
	}
	return applied, by
}
