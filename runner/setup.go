package runner

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"cronvisor/internal/config"
	"cronvisor/internal/proc"
)

// ioClasses are ionice's classes as jobs.yaml names them.
var ioClasses = map[string]int{
	"realtime": proc.IOPrioRealtime, "best-effort": proc.IOPrioBestEffort, "idle": proc.IOPrioIdle,
}

// setup is what the job's first process gets before its exec, from the
// job's process limits; nil when it sets none, and the run is started
// without the exec shim.
func setup(l config.Limits) *proc.Setup {
	if !l.Process() {
		return nil
	}
	s := &proc.Setup{Nice: l.Nice, OOMScoreAdj: l.OOMScoreAdj}
	if l.IONice != "" {
		class, level, _ := strings.Cut(l.IONice, ":")
		n, _ := strconv.Atoi(level) // config wrote it: 0..7, or none for idle
		s.IOPrio = &proc.IOPrio{Class: ioClasses[class], Level: n}
	}
	for _, r := range []struct {
		resource int
		value    *uint64
	}{{unix.RLIMIT_NOFILE, l.NoFile}, {unix.RLIMIT_NPROC, l.NProc}, {unix.RLIMIT_CORE, l.Core}} {
		if r.value != nil {
			s.Rlimits = append(s.Rlimits, proc.Rlimit{Resource: r.resource, Value: *r.value})
		}
	}
	return s
}
