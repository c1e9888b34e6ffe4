package config

// Limits are a job's resource limits (job keys, also in defaults), with
// the names systemd users know. The cgroup ones apply where cronvisor's
// cgroup subtree has the controller; the process ones are applied to the
// job's first process before its exec and need no cgroup. A nil pointer
// or a zero value means "not set": the job inherits the supervisor's.
type Limits struct {
	Nice        *int   // nice: -20..19
	IONice      string // ionice: "", "idle", "best-effort:N" or "realtime:N" (N 0..7)
	OOMScoreAdj *int   // oom_score_adj: -1000..1000
	// NoFile, NProc and Core set RLIMIT_NOFILE, RLIMIT_NPROC and
	// RLIMIT_CORE, soft and hard alike.
	NoFile, NProc, Core *uint64

	MemoryMax  int64   // memory_max: memory.max, bytes
	MemoryHigh int64   // memory_high: memory.high, bytes
	CPUMax     float64 // cpu_max: cpu.max as a fraction of one core (0.5)
	TasksMax   int64   // tasks_max: pids.max
	IOWeight   int     // io_weight: io.weight, 1..10000
}

// Cgroup tells whether any limit needs the run's cgroup.
func (l Limits) Cgroup() bool {
	return l.MemoryMax > 0 || l.MemoryHigh > 0 || l.CPUMax > 0 || l.TasksMax > 0 || l.IOWeight > 0
}

// Process tells whether any limit is applied to the job's first process
// before its exec (nice, ionice, oom_score_adj, rlimits).
func (l Limits) Process() bool {
	return l.Nice != nil || l.IONice != "" || l.OOMScoreAdj != nil || l.NoFile != nil || l.NProc != nil || l.Core != nil
}
