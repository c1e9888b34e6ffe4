package recovery

import (
	"errors"

	"cronvisor/internal/base/run"
	"cronvisor/internal/proc"
)

// Adopted reports whether runID is a run of a dead supervisor that this
// Recoverer watches (its processes still hold its lock), and that
// supervisor's pid: the run this supervisor now answers for.
func (r *Recoverer) Adopted(runID string) (supervisorPID int, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o, ok := r.adopted[runID]
	return o.supervisor, ok
}

// AdoptedRuns lists the run ids of job's adopted runs.
func (r *Recoverer) AdoptedRuns(job string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for id, o := range r.adopted {
		if o.job == job {
			out = append(out, id)
		}
	}
	return out
}

// EndAdopted ends an adopted run, as its own supervisor would have:
// replaced by a newer fire, or killed by an operator. Its keeper ends it
// and writes its end. A keeper that does not answer within the ask's
// bound (frozen: SIGSTOP, or starved) is noted (see Silent) and the run
// is ended here instead, through its cgroup leaf or, without one, its
// process group: SIGTERM, then SIGKILL after the job's kill_grace;
// without a keeper (it was killed too) the same, and the run is recorded
// with that reason. False if runID is not adopted.
func (r *Recoverer) EndAdopted(runID string, replaced bool) bool {
	r.mu.Lock()
	o, ok := r.adopted[runID]
	reason := "killed by operator"
	if replaced {
		reason = "replaced by a newer fire"
	}
	if ok {
		r.asked[runID] = reason
	}
	r.mu.Unlock()
	if !ok {
		return false
	}
	silent := 0
	for _, k := range r.keepersOf(o) {
		err := proc.AskKept(k, runID, replaced)
		if err == nil {
			return true
		}
		if errors.Is(err, proc.ErrKeeperSilent) {
			silent = k
		}
	}
	if silent > 0 {
		r.cfg.Log.Warn("the keeper of an adopted run does not answer; ending the run without it",
			"job", o.job, "run_id", runID, "keeper_pid", silent)
	} else {
		r.cfg.Log.Warn("the keeper of an adopted run is gone; ending the run without it", "job", o.job, "run_id", runID, "pgid", o.pid)
	}
	r.endWithoutKeeper(o, silent)
	return true
}

// askedReason is why an operator or a fire ended runID, "" if none did,
// and whether the run is to be recorded as replaced.
func (r *Recoverer) askedReason(runID string) (string, run.Outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	reason := r.asked[runID]
	if reason == "replaced by a newer fire" {
		return reason, run.Replaced
	}
	return reason, run.Interrupted
}
