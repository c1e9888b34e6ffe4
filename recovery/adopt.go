package recovery

import (
	"cronvisor/proc"
	"cronvisor/run"

	"golang.org/x/sys/unix"
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
// and writes its end; without a keeper (it was killed too) the run's
// process group gets SIGTERM here, then SIGKILL, and the run is recorded
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
	if k := r.keeperOf(runID); k > 0 && proc.AskKept(k, runID, replaced) == nil {
		return true
	}
	r.cfg.Log.Warn("the keeper of an adopted run is gone; ending its process group", "job", o.job, "run_id", runID, "pgid", o.pid)
	if o.pid > 0 {
		_ = unix.Kill(-o.pid, unix.SIGTERM)
		_ = unix.Kill(-o.pid, unix.SIGCONT)
	}
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

// keeperOf is the pid of the live keeper of run runID, 0 if none.
func (r *Recoverer) keeperOf(runID string) int {
	for _, k := range r.keepers() {
		if k.runID == runID {
			return k.pid
		}
	}
	return 0
}
