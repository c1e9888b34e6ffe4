package runner

import (
	"cronvisor/internal/config"
	"cronvisor/internal/proc/cgroup"
)

// WithCgroup contains every run in a cgroup v2 leaf of its own under h
// (cgroup.Detect): nothing of a run escapes it, its end is the leaf's
// emptiness, its usage is measured and the job's cgroup limits are
// written to it. With h nil, why says why runs are contained by process
// tree instead (Containment).
func WithCgroup(h *cgroup.Hierarchy, why error) Option {
	return func(s *Supervisor) { s.cgroup, s.noCgroup = h, why }
}

// Containment says how runs are contained: "cgroup v2 at PATH", or
// "process tree (WHY)", for the start-up log and `status`.
func (s *Supervisor) Containment() string {
	if s == nil {
		return ""
	}
	if s.cgroup != nil {
		return s.cgroup.String()
	}
	if s.noCgroup != nil {
		return "process tree (" + s.noCgroup.Error() + ")"
	}
	return "process tree"
}

// cgroupLimits are a job's limits that its run's leaf takes.
func cgroupLimits(l config.Limits) cgroup.Limits {
	return cgroup.Limits{MemoryMax: l.MemoryMax, MemoryHigh: l.MemoryHigh, CPUMax: l.CPUMax,
		TasksMax: l.TasksMax, IOWeight: l.IOWeight}
}
