package recovery

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/lock"
	"cronvisor/internal/proc/cgroup"
	"cronvisor/internal/store/history"
)

// orphan is a run of a dead supervisor.
type orphan struct {
	job, runID, lock string
	host             string
	supervisor       int
	pid              int  // its main process (its process group), 0 if unknown
	started          bool // its process was started (else unknown)
	// start is its start row rebuilt from the lock record, until
	// recorded; nil for a run history has.
	start *run.Record
}

func fromRow(row run.Record, lockName string) orphan {
	return orphan{job: row.Job, runID: row.RunID, lock: lockName, host: row.Host,
		supervisor: row.SupervisorPID, pid: row.PID, started: !row.StartedAt.IsZero()}
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
func (r *Recoverer) recoverRecord(ctx context.Context, lockName string, h lock.Record) (int, error) {
	if !r.orphaned(h) {
		return 0, nil
	}
	if !h.RetryAt.IsZero() {
		if n, ok, err := r.inBackoff(ctx, h); ok || err != nil {
			return n, err
		}
	}
	o := orphan{job: h.Job, runID: h.RunID, lock: lockName, host: h.Host, supervisor: h.SupervisorPID,
		started: h.PID != h.SupervisorPID} // SetPID, after the exec, wrote the run's pid
	row := run.Record{Job: h.Job, RunID: h.RunID, ScheduledAt: h.Slot, Host: h.Host,
		SupervisorPID: h.SupervisorPID,
		// A manual run does not move the job's slot cursor.
		Manual: !h.Slots[h.Job].Equal(h.Slot)}
	if o.started {
		o.pid = h.PID
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
func (r *Recoverer) orphaned(h lock.Record) bool {
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
func (r *Recoverer) candidate(h lock.Record) bool {
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
	if err == nil && st.Held && !st.Record.Foreign && st.Record.RunID == o.runID {
		r.watch(o)
		return 0, nil
	}
	// A lock that cannot be inspected is no reason to leave the run open
	// for ever: its supervisor is dead, and nothing else will close it.
	return r.finish(ctx, o)
}

// finish records o's end once what is left of it in its cgroup leaf is
// ended: what its keeper saw, else what an operator or a replacing fire
// asked, else interrupted, ended now. The end takes the one path of every
// end (package ending), so the job's state, metrics, notifications and
// consoles hear of it exactly when this call recorded it.
func (r *Recoverer) finish(ctx context.Context, o orphan) (int, error) {
	if err := r.adopt(ctx, &o); err != nil {
		return 0, err
	}
	r.endLeftovers(ctx, o)
	e, err := r.endOf(ctx, o)
	if err != nil {
		return 0, err
	}
	endPath := statedir.Dir(r.cfg.StateDir).RunEnd(o.runID)
	kept := r.readEnd(endPath, &e)
	if !kept {
		e.Ended, e.Outcome, e.Reason = r.cfg.Now(), run.Interrupted, o.reason()
		if reason, outcome := r.askedReason(o.runID); reason != "" {
			e.Outcome, e.Reason, e.Class = outcome, reason, run.ClassKilled
			if outcome == run.Replaced {
				e.Class = run.ClassReplaced
			}
		}
		r.guardedEnd(o.runID, &e)
	}
	closed, err := r.cfg.Path.End(ctx, r.cfg.Store, e)
	if err != nil {
		return 0, err
	}
	r.remember(o.runID)
	r.forgetGuard(o.runID)
	if kept {
		_ = os.Remove(endPath) // recorded now, or already
	}
	if !closed {
		return 0, nil // recorded already (by its supervisor, or another recoverer)
	}
	if kept {
		r.cfg.Log.Info("recorded the end of a dead supervisor's run that its keeper saw", "job", o.job, "run_id", o.runID,
			"outcome", e.Outcome, "reason", e.Reason)
		return 1, nil
	}
	r.cfg.Log.Warn("recorded a dead supervisor's run", "job", o.job, "run_id", o.runID, "outcome", e.Outcome, "reason", e.Reason)
	return 1, nil
}

// endOf is o's end as far as its start row tells (slot, start, pid,
// attempt), with its log; the caller fills in how it ended.
func (r *Recoverer) endOf(ctx context.Context, o orphan) (run.End, error) {
	row, _, err := r.cfg.Store.Record(ctx, o.runID)
	if err != nil {
		return run.End{}, err
	}
	e := run.End{Job: o.job, RunID: o.runID, Slot: row.ScheduledAt, Started: row.StartedAt, PID: row.PID,
		Manual: row.Manual, Attempt: max(row.Attempt, 1), Recovered: true}
	if e.PID == 0 {
		e.PID = o.pid
	}
	e.LogPath = statedir.Dir(r.cfg.StateDir).RunLog(o.job, o.runID)
	if _, err := os.Stat(e.LogPath); err != nil {
		e.LogPath = "" // the run printed nothing, or its log is gone
	}
	e.OutputTail = history.OutputTail(e.LogPath, outputTailLimit)
	return e, nil
}

// outputTailLimit bounds the output tail a recovered run's end carries
// to its notification, as notify keeps of a run it saw.
const outputTailLimit = 4096

// leftoverWait bounds the wait for a killed leaf to empty: cgroup.kill
// is SIGKILL to every process in it, which only a process stuck in the
// kernel outlasts.
const leftoverWait = 5 * time.Second

// endLeftovers ends what is left of o in its cgroup leaf, if it had one:
// its supervisor and keeper are dead and its processes let go of the
// lock, so whatever is still in the leaf (a descendant that closed fd 3
// and left the process group) has nobody to end it at the deadline. A
// run ending leaves nothing behind: they are killed with cgroup.kill and
// the empty leaf removed.
func (r *Recoverer) endLeftovers(ctx context.Context, o orphan) {
	if r.cfg.Cgroup == nil {
		return
	}
	l, err := cgroup.Open(filepath.Join(r.cfg.Cgroup.Root, "run-"+o.runID))
	if err != nil {
		return // none, or removed by its keeper
	}
	if left, _ := l.Populated(); left {
		if err := l.Kill(); err != nil {
			r.logError("ending what is left of a dead supervisor's run in its cgroup", err, "run_id", o.runID)
			return
		}
		wctx, cancel := context.WithTimeout(ctx, leftoverWait)
		defer cancel()
		// A leaf removed meanwhile is empty: the guard of the same run
		// (guard.go) saw it empty after this kill and removed it.
		if err := l.WaitEmpty(wctx); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.logError("ending what is left of a dead supervisor's run in its cgroup", err, "run_id", o.runID)
			return
		}
		r.cfg.Log.Warn("ended what was left of a dead supervisor's run in its cgroup", "job", o.job, "run_id", o.runID)
	}
	_ = l.Remove()
}
