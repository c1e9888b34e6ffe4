package cgroup

import (
	"bytes"
	"strconv"
	"time"
)

// Usage is what a leaf's processes cost, all of them, reaped or not.
type Usage struct {
	CPUUser, CPUSystem time.Duration // cpu.stat user_usec, system_usec
	// MemoryPeak is memory.peak in bytes, 0 without the memory
	// controller (or before Linux 5.19).
	MemoryPeak int64
	// OOMKilled: memory.events counts an oom_kill.
	OOMKilled bool
}

// Usage reads the leaf's cpu.stat (always there: cpu usage is counted
// without the cpu controller), and memory.peak and memory.events where
// the memory controller gives them: a leaf made where it is not enabled
// does not look for them.
func (l *Leaf) Usage() (Usage, error) {
	var u Usage
	cpu, err := l.keyed("cpu.stat", "user_usec", "system_usec")
	if err != nil {
		return u, err
	}
	u.CPUUser, u.CPUSystem = time.Duration(cpu[0])*time.Microsecond, time.Duration(cpu[1])*time.Microsecond
	if l.noMemory {
		return u, nil
	}
	err = l.parse("memory.peak", func(b []byte) error {
		u.MemoryPeak, _ = strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
		return nil
	})
	if err != nil {
		return u, nil // no memory controller here: no memory.events either
	}
	if n, err := l.keyed("memory.events", "oom_kill"); err == nil {
		u.OOMKilled = n[0] > 0
	}
	return u, nil
}
