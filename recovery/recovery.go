// Package recovery records the runs that a dead supervisor left behind, so
// that every run has exactly one record. A supervisor that dies (SIGKILL,
// a crash) may leave a run without its start row (the row was still
// queued) or without its end row; the run's processes may even go on,
// holding the run's lock.
//
// The lock file's record, written before the run's exec and marked in
// flight until the supervisor's Release, names such a run: its job, run
// id, slot and supervisor. A Recoverer rebuilds the missing start row from
// it, and closes the run as interrupted (exit status unknown) as soon as
// the run's processes have let go of the lock: at once when they have,
// else when the last of them exits, which it waits for as an event
// (lock.FileLocker.AwaitRelease) rather than polls.
//
// It looks at start-up (Sweep), whenever this supervisor takes or
// inspects a lock (the Locker it wraps reports every record it sees), and
// in a periodic Sweep for runs nothing else brought up (a lock that no
// fire here touches, a backend without AwaitRelease).
package recovery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"cronvisor/history"
	"cronvisor/lock"
)

// Store is the history the Recoverer writes: *history.Store.
type Store interface {
	OpenRuns(ctx context.Context) ([]history.Record, error)
	Adopt(ctx context.Context, r history.Record) (bool, error)
	Interrupt(ctx context.Context, runID string, ended time.Time, reason, logPath string) (bool, error)
}

// Awaiter is a lock backend whose release can be waited for
// (*lock.FileLocker). With another backend a run still held is looked at
// again at the next Sweep.
type Awaiter interface {
	AwaitRelease(ctx context.Context, name, runID string) error
}

// Config is what a Recoverer needs.
type Config struct {
	Store  Store
	Locker lock.Locker // the backend itself; Recoverer.Locker wraps it
	Alive  Alive       // which other supervisors are alive
	// Self, Started and Mine judge this process's pid: a run of Self is
	// its own if it started at Started or later, or if Mine says so (a
	// run in flight here: a clock stepped back since the start), else a
	// predecessor's that had the same pid, as a restarted container's
	// daemon often has. Mine may be slow: it is asked only about runs
	// from before Started. Nil Mine: none.
	Self    int
	Started time.Time
	Mine    func(runID string) bool
	// LockOf maps a job of an open history row to its lock name.
	LockOf   func(job string) string
	StateDir string // where run logs are (history.LogPath)
	// KeepAge is the history's retention (0: forever): an in-flight
	// record older than that is not recorded again, its row having been
	// pruned. Nil: forever.
	KeepAge func() time.Duration
	Now     func() time.Time // default time.Now
	Log     *slog.Logger
}

// Recoverer recovers the runs of dead supervisors on this host. It owns
// one goroutine that handles the records fires report, and one per run
// whose lock it waits for; Close stops and waits for them all.
type Recoverer struct {
	cfg  Config
	host string
	seen chan sighting

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	watching map[string]bool // run ids whose lock is awaited
	done     map[string]bool // run ids found recorded, bounded by maxDone
}

// sighting is a lock record a fire or an inspection came across.
type sighting struct {
	lock   string
	holder lock.Holder
}

// seenQueue bounds the records waiting for the Recoverer's goroutine; one
// that finds the queue full is dropped for the periodic Sweep to find.
const seenQueue = 64

// maxDone bounds the memory of runs already handled; past it, it starts
// over (a forgotten run costs two no-op statements when seen again).
const maxDone = 4096

// New returns a Recoverer, its goroutine started.
func New(cfg Config) *Recoverer {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	host, _ := os.Hostname()
	r := &Recoverer{cfg: cfg, host: host, seen: make(chan sighting, seenQueue),
		watching: map[string]bool{}, done: map[string]bool{}}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.wg.Add(1)
	go r.loop()
	return r
}

// Close stops waiting for locks and waits for the goroutines to return.
func (r *Recoverer) Close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
}

func (r *Recoverer) loop() {
	defer r.wg.Done()
	for {
		select {
		case <-r.ctx.Done():
			return
		case s := <-r.seen:
			_, err := r.recoverRecord(r.ctx, s.lock, s.holder)
			r.logError("recording a dead supervisor's run", err, "lock", s.lock, "run_id", s.holder.RunID)
		}
	}
}

// Sweep looks at every lock record and every open history row for runs of
// dead supervisors on this host: it records those whose processes have
// let go of their lock and waits for the others' locks. It returns how
// many runs it closed itself.
func (r *Recoverer) Sweep(ctx context.Context) (int, error) {
	closed := 0
	var errs []error
	handled := map[string]bool{}
	statuses, err := r.cfg.Locker.List(ctx) // with an error, still those it could read
	if err != nil {
		errs = append(errs, err)
	}
	for _, st := range statuses {
		if !r.candidate(st.Holder) {
			continue
		}
		handled[st.Holder.RunID] = true
		n, err := r.recoverRecord(ctx, st.Name, st.Holder)
		closed += n
		errs = append(errs, err)
	}
	open, err := r.cfg.Store.OpenRuns(ctx)
	if err != nil {
		return closed, errors.Join(append(errs, err)...)
	}
	for _, row := range open {
		if handled[row.RunID] || row.Host != r.host || r.known(row.RunID) || !r.dead(row.SupervisorPID, row.StartedAt, row.RunID) {
			continue
		}
		n, err := r.recoverRun(ctx, fromRow(row, r.cfg.LockOf(row.Job)))
		closed += n
		errs = append(errs, err)
	}
	return closed, errors.Join(errs...)
}

// orphan is a run of a dead supervisor.
type orphan struct {
	job, runID, lock string
	host             string
	supervisor       int
	started          bool // its process was started (else unknown)
	// start is its start row rebuilt from the lock record, until
	// recorded; nil for a run history has.
	start *history.Record
}

func fromRow(row history.Record, lockName string) orphan {
	return orphan{job: row.Job, runID: row.RunID, lock: lockName, host: row.Host,
		supervisor: row.SupervisorPID, started: !row.StartedAt.IsZero()}
}

// reason says why the run is interrupted.
func (o orphan) reason() string {
	if o.started {
		return fmt.Sprintf("supervisor (pid %d on %s) died during the run; exit status unknown", o.supervisor, o.host)
	}
	return fmt.Sprintf("supervisor (pid %d on %s) died as the run was starting; whether it ran is unknown", o.supervisor, o.host)
}

// recoverRecord recovers the run a lock record names, if it is an in-flight
// run of a dead supervisor on this host, rebuilding its start row if
// history has none. It returns 1 if it closed the run.
func (r *Recoverer) recoverRecord(ctx context.Context, lockName string, h lock.Holder) (int, error) {
	if !r.orphaned(h) {
		return 0, nil
	}
	o := orphan{job: h.Job, runID: h.RunID, lock: lockName, host: h.Host, supervisor: h.SupervisorPID,
		started: h.PID != h.SupervisorPID} // SetPID, after the exec, wrote the run's pid
	row := history.Record{Job: h.Job, RunID: h.RunID, ScheduledAt: h.Slot, Host: h.Host,
		SupervisorPID: h.SupervisorPID,
		// A manual run does not move the job's slot cursor.
		Manual: !h.Slots[h.Job].Equal(h.Slot)}
	if o.started {
		// Since is taken just before the exec: the start to within
		// the fork's milliseconds.
		row.StartedAt, row.PID = h.Since, h.PID
	}
	if row.ScheduledAt.IsZero() {
		row.ScheduledAt = h.Since
	}
	o.start = &row
	// A store that fails now (history degraded) does not stop the wait
	// for the lock: finish tries the start again before the end.
	adoptErr := r.adopt(ctx, &o)
	n, err := r.recoverRun(ctx, o)
	return n, errors.Join(adoptErr, err)
}

// adopt records o's start if it has one to rebuild and history has none.
func (r *Recoverer) adopt(ctx context.Context, o *orphan) error {
	if o.start == nil {
		return nil
	}
	added, err := r.cfg.Store.Adopt(ctx, *o.start)
	if err != nil {
		return err
	}
	if added {
		r.cfg.Log.Warn("rebuilt the start of a dead supervisor's run from its lock record",
			"job", o.job, "run_id", o.runID, "supervisor_pid", o.supervisor)
	}
	o.start = nil // recorded
	return nil
}

// orphaned reports whether h names an in-flight run of a dead supervisor on
// this host that is not known to be recorded already.
func (r *Recoverer) orphaned(h lock.Holder) bool {
	if !r.candidate(h) || r.known(h.RunID) {
		return false
	}
	if keep := r.keepAge(); keep > 0 && h.Since.Before(r.cfg.Now().Add(-keep)) {
		return false
	}
	return r.dead(h.SupervisorPID, h.Since, h.RunID)
}

// candidate is orphaned's cheap part, done on the fire's path: a record of
// an unfinished run of another supervisor (or an earlier one of this pid).
func (r *Recoverer) candidate(h lock.Holder) bool {
	return h.InFlight && !h.Foreign && h.RunID != "" && h.Job != "" && h.Host == r.host &&
		(h.SupervisorPID != r.cfg.Self || h.Since.Before(r.cfg.Started))
}

// dead reports whether the supervisor pid of run runID, which that
// supervisor ran at since, is gone (see Config.Self).
func (r *Recoverer) dead(pid int, since time.Time, runID string) bool {
	if pid == r.cfg.Self {
		return since.Before(r.cfg.Started) && (r.cfg.Mine == nil || !r.cfg.Mine(runID))
	}
	return !r.cfg.Alive(pid, since)
}

func (r *Recoverer) keepAge() time.Duration {
	if r.cfg.KeepAge == nil {
		return 0
	}
	return r.cfg.KeepAge()
}

// recoverRun closes o now if its processes have let go of its lock, else
// waits for that in a goroutine. It returns 1 if it closed the run now.
func (r *Recoverer) recoverRun(ctx context.Context, o orphan) (int, error) {
	st, err := r.cfg.Locker.Inspect(ctx, o.lock)
	if err == nil && st.Held && !st.Holder.Foreign && st.Holder.RunID == o.runID {
		r.watch(o)
		return 0, nil
	}
	// A lock that cannot be inspected is no reason to leave the run open
	// for ever: its supervisor is dead, and nothing else will close it.
	return r.finish(ctx, o)
}

// finish records o as interrupted, ended now.
func (r *Recoverer) finish(ctx context.Context, o orphan) (int, error) {
	if err := r.adopt(ctx, &o); err != nil {
		return 0, err
	}
	logPath := history.LogPath(r.cfg.StateDir, o.job, o.runID)
	if _, err := os.Stat(logPath); err != nil {
		logPath = "" // the run printed nothing, or its log is gone
	}
	closed, err := r.cfg.Store.Interrupt(ctx, o.runID, r.cfg.Now(), o.reason(), logPath)
	if err != nil {
		return 0, err
	}
	r.remember(o.runID)
	if !closed {
		return 0, nil // recorded already (by its supervisor, or another recoverer)
	}
	r.cfg.Log.Warn("recorded a dead supervisor's run as interrupted", "job", o.job, "run_id", o.runID, "reason", o.reason())
	return 1, nil
}

// watch waits, in a goroutine of its own, for o's processes to let go of
// its lock, then records o. Once per run; not after Close, nor with a
// backend that cannot be waited for.
func (r *Recoverer) watch(o orphan) {
	aw, ok := r.cfg.Locker.(Awaiter)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.watching[o.runID] {
		return
	}
	r.watching[o.runID] = true
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer r.unwatch(o.runID)
		if err := aw.AwaitRelease(r.ctx, o.lock, o.runID); err != nil {
			r.logError("waiting for a dead supervisor's run to let go of its lock", err, "lock", o.lock, "run_id", o.runID)
			return // the next Sweep looks again
		}
		_, err := r.finish(r.ctx, o)
		r.logError("recording a dead supervisor's run", err, "run_id", o.runID)
	}()
}

// logError logs err unless it is nil, the Recoverer is closing, or the
// store is unavailable (history degraded, which is reported once
// elsewhere: the run is looked at again by the next Sweep).
func (r *Recoverer) logError(msg string, err error, attrs ...any) {
	if err == nil || r.ctx.Err() != nil || errors.Is(err, history.ErrUnavailable) {
		return
	}
	r.cfg.Log.Error(msg, append(attrs, "err", err)...)
}

func (r *Recoverer) unwatch(runID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.watching, runID)
}

// known reports whether the run is being waited for or known recorded.
func (r *Recoverer) known(runID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.watching[runID] || r.done[runID]
}

func (r *Recoverer) remember(runID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.done) >= maxDone {
		clear(r.done)
	}
	r.done[runID] = true
}
