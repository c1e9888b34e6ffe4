package recovery

import (
	"context"
	"errors"
	"slices"
	"time"

	"cronvisor/internal/lock"
)

// changedLister is a lock backend that can list only the locks written
// since a time (*file.Locker).
type changedLister interface {
	ListChangedSince(ctx context.Context, t time.Time) ([]lock.Status, error)
}

// rescanSlack widens each periodic look back past the previous one, for
// file systems with coarse timestamps and a record written as it started.
const rescanSlack = 5 * time.Second

// Sweep looks at lock records and open history rows for runs of dead
// supervisors on this host: it records those whose processes have let go
// of their lock and waits for the others' locks. It returns how many runs
// it closed itself.
//
// The first Sweep reads every lock record; later ones, with a backend that
// can, read only the records written since the previous Sweep (a dead
// supervisor's last record is written just before it died, or it is of a
// run whose start row history has) and again those that named a live
// supervisor's run then, which may have died since without a word: a
// daemon with 10,000 locks does not read them all every minute.
func (r *Recoverer) Sweep(ctx context.Context) (int, error) {
	began := time.Now() // file times are the wall clock's, not cfg.Now's
	// First: a run's deadline may be near. The rest may watch the same
	// run's lock: whichever sees it end first records it, once.
	r.guardOrphans(ctx)
	closed := 0
	statuses, err := r.listLocks(ctx) // with an error, still those it could read
	errs := []error{err}
	handled := map[string]bool{}
	live := map[string]bool{} // locks whose record is a live supervisor's run
	for _, st := range statuses {
		h := st.Record
		if !r.candidate(h) {
			continue
		}
		handled[h.RunID] = true
		if !r.dead(h.SupervisorPID, h.Since, h.RunID) {
			live[st.Name] = true
			continue
		}
		n, err := r.recoverRecord(ctx, st.Name, h)
		closed += n
		errs = append(errs, err)
	}
	open, err := r.cfg.Store.OpenRuns(ctx)
	errs = append(errs, err)
	for _, row := range open {
		if handled[row.RunID] || row.Host != r.host || r.known(row.RunID) || !r.dead(row.SupervisorPID, row.StartedAt, row.RunID) {
			continue
		}
		n, err := r.recoverRun(ctx, fromRow(row, r.cfg.LockOf(row.Job)))
		closed += n
		errs = append(errs, err)
	}
	r.adoptKeepers()
	errs = append(errs, r.sweepEnds(ctx))
	err = errors.Join(errs...)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil { // else the next Sweep reads them all again
		r.scanned, r.live = began, live
	}
	return closed, err
}

// listLocks returns the records Sweep looks at: all of them, or those
// written since the last successful Sweep and those of live supervisors'
// runs it saw.
func (r *Recoverer) listLocks(ctx context.Context) ([]lock.Status, error) {
	r.mu.Lock()
	since, live := r.scanned, r.live
	r.mu.Unlock()
	cl, ok := r.cfg.Locker.(changedLister)
	if !ok || since.IsZero() {
		return r.cfg.Locker.List(ctx)
	}
	statuses, err := cl.ListChangedSince(ctx, since.Add(-rescanSlack))
	errs := []error{err}
	for name := range live {
		if slices.ContainsFunc(statuses, func(st lock.Status) bool { return st.Name == name }) {
			continue
		}
		st, err := r.cfg.Locker.Inspect(ctx, name)
		if err == nil {
			statuses = append(statuses, st)
		}
		errs = append(errs, err)
	}
	return statuses, errors.Join(errs...)
}
