package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// cpuPeriod is cpu.max's period, in microseconds: the kernel's default.
const cpuPeriod = 100000

// Limits are a run's cgroup limits, written to its leaf before its start;
// a zero field is not written (the leaf inherits its parent's).
type Limits struct {
	MemoryMax  int64   // memory.max, bytes
	MemoryHigh int64   // memory.high, bytes
	CPUMax     float64 // cpu.max, as a fraction of one core (0.5: "50000 100000")
	TasksMax   int64   // pids.max
	IOWeight   int     // io.weight, 1..10000
}

// IsZero reports whether no limit is set.
func (l Limits) IsZero() bool { return l == Limits{} }

// setting is one limit as a file of the leaf.
type setting struct {
	key, controller, file, value string
}

// settings are the files l writes, in the order written.
func (l Limits) settings() []setting {
	var s []setting
	if l.MemoryHigh > 0 {
		s = append(s, setting{"memory_high", "memory", "memory.high", strconv.FormatInt(l.MemoryHigh, 10)})
	}
	if l.MemoryMax > 0 {
		s = append(s, setting{"memory_max", "memory", "memory.max", strconv.FormatInt(l.MemoryMax, 10)})
	}
	if l.CPUMax > 0 {
		quota := max(int64(l.CPUMax*cpuPeriod), 1000) // the kernel's floor is 1 ms
		s = append(s, setting{"cpu_max", "cpu", "cpu.max", strconv.FormatInt(quota, 10) + " " + strconv.Itoa(cpuPeriod)})
	}
	if l.TasksMax > 0 {
		s = append(s, setting{"tasks_max", "pids", "pids.max", strconv.FormatInt(l.TasksMax, 10)})
	}
	if l.IOWeight > 0 {
		s = append(s, setting{"io_weight", "io", "io.weight", "default " + strconv.Itoa(l.IOWeight)})
	}
	return s
}

// Controllers are the controllers l needs.
func (l Limits) Controllers() []string {
	var out []string
	for _, s := range l.settings() {
		if !slices.Contains(out, s.controller) {
			out = append(out, s.controller)
		}
	}
	return out
}

// Check says whether h's leaves can take l: every controller l needs is
// enabled in h.Root's cgroup.subtree_control. For `validate`, and for
// Create before it writes anything.
func (h *Hierarchy) Check(l Limits) error {
	return Check(h, l)
}

// Check is Hierarchy.Check that also takes a nil h: cronvisor has no
// cgroup here, and any limit is refused. The error names the key
// (memory_max) and the controller.
func Check(h *Hierarchy, l Limits) error {
	for _, s := range l.settings() {
		if h == nil {
			return fmt.Errorf("%s needs a cgroup v2 leaf per run, and runs here are contained by process tree", s.key)
		}
		if !slices.Contains(h.Controllers, s.controller) {
			return fmt.Errorf("%s needs the %s controller, which is not enabled in %s (cgroup.subtree_control)",
				s.key, s.controller, filepath.Join(h.Root, "cgroup.subtree_control"))
		}
	}
	return nil
}

// write writes l into the leaf at dir.
func (l Limits) write(dir string) error {
	for _, s := range l.settings() {
		if err := os.WriteFile(filepath.Join(dir, s.file), []byte(s.value), 0); err != nil {
			return fmt.Errorf("%s: %w", s.key, err)
		}
	}
	return nil
}
