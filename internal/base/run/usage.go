package run

import (
	"strings"
	"time"
)

// Usage is what a run cost, read from its cgroup when it had one (cgroup
// v2's cpu.stat, memory.peak and memory.events). Measured is false when
// the run was not contained in a cgroup: nothing was read, and the zero
// values mean "unknown", not "none".
type Usage struct {
	Measured  bool
	CPUUser   time.Duration
	CPUSystem time.Duration
	// MemoryPeak is the run's peak memory in bytes, 0 when unknown (the
	// memory controller is not enabled in cronvisor's cgroup subtree).
	MemoryPeak int64
	// OOMKilled: the kernel's OOM killer killed a process of the run.
	OOMKilled bool
}

// OOMReason starts the reason of a run that the kernel's OOM killer ended
// (its Usage.OOMKilled): the outcome stays the one its exit gives
// (failed, or timeout), so the set of outcomes is the contract's, and
// "oom" in the reason says why.
const OOMReason = "oom: killed by the OOM killer"

// WithOOM is reason with OOMReason in front when u says the OOM killer
// killed a process of the run, else reason itself.
func (u Usage) WithOOM(reason string) string {
	if !u.OOMKilled || strings.HasPrefix(reason, OOMReason) {
		return reason
	}
	if reason == "" {
		return OOMReason
	}
	return OOMReason + "; " + reason
}
