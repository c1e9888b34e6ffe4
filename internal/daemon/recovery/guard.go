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
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/backends"
	"cronvisor/internal/proc"
	"cronvisor/internal/proc/cgroup"
)

// A run whose supervisor and keeper both died goes on with nobody to end
// it at its deadline, nor, under a Redis lease, to renew the lease: it
// would outlive its deadline, and its lease would lapse under it and let
// another run of the job start beside it. The next supervisor on the
// state dir guards it in their place, from the run's guard file
// (proc.ReadGuard): it renews its lease (backends.KeepLease, as the keeper
// did), ends it at its deadline (SIGTERM, kill_grace, SIGKILL: through
// its cgroup leaf, else its process group and tag), records its end
// through the one path, and only then releases the lease.

// guardEnd is how a guard ended a run, recorded in place of interrupted.
type guardEnd struct {
	outcome run.Outcome
	reason  string
	class   run.Class
}

// guardLease is a lease taken over for a guarded run (backends.KeepLease).
type guardLease interface {
	lock.KeptLease
	// Leave stops renewing it without releasing it.
	Leave()
}

// guardOrphans guards the runs of dead supervisors whose keeper is dead
// too and whose processes go on (their guard slots say how). The slots
// of dead supervisors are removed once free, or once their run is over
// (the run is recorded from its lock record, its history row or its
// End, or by its guard).
func (r *Recoverer) guardOrphans(ctx context.Context) {
	dir := statedir.Dir(r.cfg.StateDir)
	entries, err := os.ReadDir(dir.Keepers())
	if err != nil {
		return // no run was ever kept here
	}
	var kept map[int]bool // supervisors whose keeper lives, read once
	for _, e := range entries {
		slot, ok := statedir.GuardSlot(e.Name())
		if !ok {
			continue
		}
		path := dir.Guard(slot)
		g, err := proc.ReadGuard(path)
		switch {
		case errors.Is(err, proc.ErrGuardFree):
			if pid, since, ok := proc.GuardOwner(slot); ok && r.dead(pid, since, "") {
				_ = os.Remove(path) // its supervisor is gone: nobody reuses it
			}
			continue
		case err != nil:
			r.dropTorn(path, err)
			continue
		case !r.dead(g.Run.SupervisorPID, g.Written, g.RunID):
			continue
		case r.isDone(g.RunID):
			_ = os.Remove(path)
			continue
		}
		if kept == nil {
			kept = r.keeperSupervisors()
		}
		if !kept[g.Run.SupervisorPID] && !r.isGuarded(g.RunID) {
			r.guardOrphan(ctx, g, path)
		}
	}
}

// tornAge is how old an unreadable guard file must be to be removed: one
// being written now is left alone.
const tornAge = time.Minute

// dropTorn removes the unreadable guard file at path once it is old.
func (r *Recoverer) dropTorn(path string, err error) {
	if fi, serr := os.Stat(path); serr == nil && time.Since(fi.ModTime()) > tornAge {
		r.cfg.Log.Warn("removing an unreadable guard file", "path", path, "err", err)
		_ = os.Remove(path)
	}
}

// isGuarded reports whether runID is guarded here now.
func (r *Recoverer) isGuarded(runID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.guarding[runID]
}

// isDone reports whether runID is known recorded.
func (r *Recoverer) isDone(runID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done[runID]
}

// keeperSupervisors is the set of supervisors whose keeper process of
// this state dir is alive, as /proc shows the keepers' command lines.
func (r *Recoverer) keeperSupervisors() map[int]bool {
	endDir := statedir.Dir(r.cfg.StateDir).Keepers()
	pids, _ := procfs.PIDs()
	out := map[int]bool{}
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			continue
		}
		k, ok := proc.ParseKeeper(strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"))
		if ok && k.Ends == endDir {
			out[k.SupervisorPID] = true
		}
	}
	return out
}

// guardOrphan starts guarding g's run if anything of it is left; else
// it removes its guard file.
func (r *Recoverer) guardOrphan(ctx context.Context, g proc.Orphaned, path string) {
	o := orphan{job: g.Run.Job, runID: g.RunID, lock: r.cfg.LockOf(g.Run.Job), host: r.host,
		supervisor: g.Run.SupervisorPID, started: true}
	row, found, err := r.cfg.Store.Record(ctx, g.RunID)
	switch {
	case err == nil && found && row.Outcome.Final():
		_ = os.Remove(path) // recorded: its supervisor saw it end
		return
	case err == nil && found:
		o.pid, o.host = row.PID, row.Host
	case err == nil:
		// Its start row was never committed: rebuilt from the guard
		// file, written just before the run's start.
		o.start = &run.Record{Job: o.job, RunID: o.runID, ScheduledAt: g.Run.Slot, StartedAt: g.Written,
			Host: r.host, SupervisorPID: o.supervisor, Manual: g.Run.Manual, Attempt: max(g.Run.Attempt, 1)}
	}
	p := runProcs{pgid: o.pid, tag: []byte(g.Tag)}
	if g.Cgroup != "" {
		p.leaf, _ = cgroup.Open(g.Cgroup) // nil if gone: by group and tag then
	}
	if !p.alive() {
		_ = os.Remove(path) // nothing to guard; the rest of recovery records it
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.guarding[o.runID] {
		return
	}
	if r.guarding == nil {
		r.guarding = map[string]bool{}
	}
	r.guarding[o.runID] = true
	if _, ok := r.adopted[o.runID]; !ok {
		r.adopted[o.runID] = o // shown adopted; kill and replace act on it
	}
	r.wg.Go(func() { r.noteSlots(o.runID) })
	r.wg.Go(func() { r.guardRun(o, g, p, path) })
}

// guardRun guards o's run until it is over, then records it and lets go
// of its lease; at Close it leaves the run as it found it, to the next
// supervisor (its lease, not renewed any more, lapses after its ttl).
func (r *Recoverer) guardRun(o orphan, g proc.Orphaned, p runProcs, path string) {
	defer r.unguard(o.runID)
	r.cfg.Log.Warn("guarding a dead supervisor's run whose keeper died too", "job", o.job, "run_id", o.runID,
		"supervisor_pid", o.supervisor, "deadline", g.Deadline, "contained", p.leaf != nil)
	lease, lost, why := r.keepLease(g)
	if !r.watchRun(o, g, p, lease, lost, why) {
		if lease != nil {
			lease.Leave()
		}
		return
	}
	var err error
	if _, awaits := r.cfg.Locker.(Awaiter); awaits && g.Lock {
		_, err = r.recoverRun(r.ctx, o) // recorded once its lock is let go
	} else {
		_, err = r.finish(r.ctx, o)
	}
	r.logError("recording a guarded run", err, "run_id", o.runID)
	if err == nil {
		_ = os.Remove(path) // its run is over; removed at the next Sweep else
	}
	if lease == nil {
		return
	}
	if err != nil {
		lease.Leave() // the run is over: its lease may lapse, the record waits for a Sweep
		return
	}
	if err := lease.Release(); err != nil {
		r.cfg.Log.Warn("releasing a guarded run's lease", "run_id", o.runID, "err", err)
	}
}

// watchRun waits for the run's end, its deadline or its lease's loss,
// and ends it at either; false if the Recoverer closed first.
func (r *Recoverer) watchRun(o orphan, g proc.Orphaned, p runProcs, lease guardLease, lost <-chan struct{}, why string) bool {
	if why != "" || g.AtOnce {
		grace := g.Grace
		if g.Within > 0 {
			grace = min(grace, g.Within/2)
		}
		r.endGuarded(o, p, grace, guardEnd{run.Interrupted, "lock lost: supervisor and keeper died" + why, run.ClassLockLost})
		return r.ctx.Err() == nil
	}
	gone, stop := p.watchGone(r.ctx)
	defer stop()
	var deadline <-chan time.Time
	if !g.Deadline.IsZero() {
		t := time.NewTimer(time.Until(g.Deadline))
		defer t.Stop()
		deadline = t.C
	}
	select {
	case <-gone:
	case <-deadline:
		r.endGuarded(o, p, g.Grace, guardEnd{outcome: run.Timeout,
			reason: "exceeded timeout " + g.Timeout.String() + " (ended by the next supervisor: its own and its keeper died)"})
	case <-lost:
		r.endGuarded(o, p, min(g.Grace, lease.Within()/2),
			guardEnd{run.Interrupted, "lock lost: the next supervisor could not renew the lease", run.ClassLockLost})
	case <-r.ctx.Done():
	}
	return r.ctx.Err() == nil
}

// endGuarded ends o's run, how it ended noted first for finish.
func (r *Recoverer) endGuarded(o orphan, p runProcs, grace time.Duration, ge guardEnd) {
	r.mu.Lock()
	if r.guardEnds == nil {
		r.guardEnds = map[string]guardEnd{}
	}
	r.guardEnds[o.runID] = ge
	r.mu.Unlock()
	r.cfg.Log.Warn("ending a guarded run", "job", o.job, "run_id", o.runID, "reason", ge.reason, "grace", grace)
	if !p.end(r.ctx, grace) && r.ctx.Err() == nil {
		r.cfg.Log.Error("a guarded run's processes outlived SIGKILL", "job", o.job, "run_id", o.runID, "pids", p.members())
	}
}

// keepLease takes over g's lease, if it has one, and keeps renewing it:
// lost is closed if it is lost. why says why a lease it has cannot be
// kept ("" when there is none, or it is kept): the run is then ended at
// once, its lease lapsing or lapsed.
func (r *Recoverer) keepLease(g proc.Orphaned) (lease guardLease, lost <-chan struct{}, why string) {
	if g.Lease == nil {
		return nil, nil, ""
	}
	kl, err := backends.KeepLease(g.Lease)
	if err != nil {
		return nil, nil, " (" + err.Error() + ")"
	}
	l, ok := kl.(guardLease)
	if !ok {
		_ = kl.Release()
		return nil, nil, " (a lease that cannot be left)"
	}
	lost = l.Keep(r.ctx)
	select {
	case <-lost: // its first renewal failed: lapsed, or another's now
		l.Leave()
		return nil, nil, " (its lease had lapsed)"
	default:
	}
	return l, lost, ""
}

// guardedEnd writes into e how a guard ended its run, if one did.
func (r *Recoverer) guardedEnd(runID string, e *run.End) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ge, ok := r.guardEnds[runID]; ok {
		e.Outcome, e.Reason, e.Class = ge.outcome, ge.reason, ge.class
	}
}

// forgetGuard drops how a guard ended runID, once it is recorded.
func (r *Recoverer) forgetGuard(runID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.guardEnds, runID)
}

func (r *Recoverer) unguard(runID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.guarding, runID)
	if !r.watching[runID] && !r.keeping[runID] {
		r.unadoptLocked(runID)
	}
}
