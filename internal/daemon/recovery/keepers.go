package recovery

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/proc"
)

// liveKeeper is the keeper of a run on this state dir, as /proc shows it.
type liveKeeper struct {
	pid, supervisor int
	started         time.Time
	job, runID      string
}

// keepers lists the runs that live keeper processes of this state dir
// keep (their Ends go to its keepers' directory), as each one's socket
// tells.
func (r *Recoverer) keepers() []liveKeeper {
	endDir := statedir.Dir(r.cfg.StateDir).Keepers()
	pids, _ := procfs.PIDs()
	var out []liveKeeper
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			continue
		}
		k, ok := proc.ParseKeeper(strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"))
		if !ok || k.Ends != endDir {
			continue
		}
		p, err := procfs.Lookup(pid)
		if err != nil {
			continue
		}
		runs, _ := proc.KeptRuns(pid)
		for _, run := range runs {
			out = append(out, liveKeeper{pid: pid, supervisor: run.SupervisorPID, started: p.Started, job: run.Job, runID: run.RunID})
		}
	}
	return out
}

// adoptKeepers takes on the runs whose supervisor died and whose keeper
// still runs them: each is shown adopted, can be killed or replaced, and
// is recorded from its End as soon as its keeper lets go of it (watched through
// its socket, not polled), whatever its lock backend.
func (r *Recoverer) adoptKeepers() {
	for _, k := range r.keepers() {
		if k.supervisor == 0 || !r.dead(k.supervisor, k.started, k.runID) {
			continue
		}
		r.watchKeeper(k)
	}
}

func (r *Recoverer) watchKeeper(k liveKeeper) {
	r.mu.Lock()
	if r.closed || r.keeping[k.runID] {
		r.mu.Unlock()
		return
	}
	r.keeping[k.runID] = true
	if _, ok := r.adopted[k.runID]; !ok {
		r.adopted[k.runID] = orphan{job: k.job, runID: k.runID, supervisor: k.supervisor}
	}
	r.wg.Go(func() { r.noteSlots(k.runID) })
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		// Close cancels r.ctx: the wait is cut off then, not left to the
		// run's end.
		_ = proc.WatchKept(r.ctx, k.pid, k.runID)
		r.mu.Lock()
		delete(r.keeping, k.runID)
		if !r.watching[k.runID] {
			r.unadoptLocked(k.runID)
		}
		r.mu.Unlock()
		if r.ctx.Err() == nil {
			_, noEnd := os.Stat(statedir.Dir(r.cfg.StateDir).RunEnd(k.runID))
			r.logError("recording a kept run's end", r.recordEnd(r.ctx, k.runID), "run_id", k.runID)
			if os.IsNotExist(noEnd) {
				r.guardOrphans(r.ctx) // its keeper died before the run ended: guarded here now
			}
		}
	}()
}

// sweepEnds records the Ends that keepers left and no watch recorded.
func (r *Recoverer) sweepEnds(ctx context.Context) error {
	entries, err := os.ReadDir(statedir.Dir(r.cfg.StateDir).Keepers())
	if err != nil {
		return nil // none yet
	}
	var errs []error
	for _, e := range entries {
		runID, ok := statedir.RunEndID(e.Name())
		if !ok || r.known(runID) {
			continue
		}
		errs = append(errs, r.recordEnd(ctx, runID))
	}
	return errors.Join(errs...)
}

// recordEnd records the End of runID, rebuilding its start row from the
// End if history has none (its supervisor died before the row was
// committed), and removes the End once it is recorded.
func (r *Recoverer) recordEnd(ctx context.Context, runID string) error {
	path := statedir.Dir(r.cfg.StateDir).RunEnd(runID)
	e, err := proc.ReadEnd(path)
	if err != nil {
		return nil // gone: recorded by another path
	}
	o := orphan{job: e.Run.Job, runID: runID, lock: r.cfg.LockOf(e.Run.Job), host: e.Run.Host,
		supervisor: e.Run.SupervisorPID, pid: e.Run.PID, started: !e.Run.Started.IsZero()}
	if o.job != "" {
		row := run.Record{Job: o.job, RunID: runID, ScheduledAt: e.Run.Slot, StartedAt: e.Run.Started,
			Host: o.host, SupervisorPID: o.supervisor, PID: o.pid, Manual: e.Run.Manual, Attempt: max(e.Run.Attempt, 1)}
		if row.ScheduledAt.IsZero() {
			row.ScheduledAt = e.Run.Started
		}
		o.start = &row
	}
	_, err = r.finish(ctx, o)
	return err
}
