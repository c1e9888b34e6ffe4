package config

// LintOption is an optional check of Lint.
type LintOption func(*lintOptions)

type lintOptions struct {
	controllers ControllerCheck
}

// ControllerCheck tells whether this host can apply a cgroup v2
// controller's limits to runs: nil when it can, else why not. controller
// is "memory" (memory_max, memory_high), "cpu" (cpu_max), "pids"
// (tasks_max) or "io" (io_weight). Package cgroup provides it, and
// validate and the daemon pass it in: config itself never looks at the
// cgroup file system.
type ControllerCheck func(controller string) error

// WithControllerCheck has Lint report an error at every cgroup limit key
// whose controller this host cannot apply: a run whose limits cannot be
// written into its cgroup does not start (recorded error), so validate
// refuses the file here rather than let every fire fail.
func WithControllerCheck(c ControllerCheck) LintOption {
	return func(o *lintOptions) { o.controllers = c }
}

// limitController is the cgroup controller of each cgroup limit key.
var limitController = []struct{ key, controller string }{
	{"memory_max", "memory"}, {"memory_high", "memory"}, {"cpu_max", "cpu"},
	{"tasks_max", "pids"}, {"io_weight", "io"},
}

// limits warns about limits that will not do what they say, and refuses
// those this host cannot apply.
func (l *linter) limits() {
	lim := l.job.Limits
	if lim.MemoryMax > 0 && lim.MemoryHigh >= lim.MemoryMax {
		l.warn("memory_high", "memory_high is not below memory_max: the run is never throttled before memory_max ends it")
	}
	check := l.cache.opts.controllers
	if check == nil || !lim.Cgroup() {
		return
	}
	set := map[string]bool{
		"memory_max": lim.MemoryMax > 0, "memory_high": lim.MemoryHigh > 0, "cpu_max": lim.CPUMax > 0,
		"tasks_max": lim.TasksMax > 0, "io_weight": lim.IOWeight > 0,
	}
	for _, kc := range limitController {
		if !set[kc.key] {
			continue
		}
		err, seen := l.cache.controllers[kc.controller]
		if !seen {
			err = check(kc.controller)
			l.cache.controllers[kc.controller] = err
		}
		if err != nil {
			l.fail(kc.key, "%s cannot be applied on this host (the %s controller: %v); the job's runs would not start", kc.key, kc.controller, err)
		}
	}
}
