package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of /proc/PID/stat's start time: USER_HZ, 100 on every
// architecture Go supports on Linux.
const userHZ = 100

// ErrExited is returned by Lookup for a process that has exited and is
// waiting to be reaped (a zombie).
var ErrExited = errors.New("process has exited")

// Process is what /proc says about a live process.
type Process struct {
	PID     int
	Argv    []string // from /proc/PID/cmdline; empty for kernel threads
	Exe     string   // the /proc/PID/exe link; "" if this process may not read it
	Started time.Time
}

// Lookup describes the live process pid. Started is exact to within a
// second: the boot time it counts from is whole seconds.
func Lookup(pid int) (Process, error) {
	st, err := readStat(pid)
	if err != nil {
		return Process{}, err
	}
	if !st.alive() {
		return Process{}, fmt.Errorf("pid %d: %w", pid, ErrExited)
	}
	dir := "/proc/" + strconv.Itoa(pid)
	cmd, err := readProcFile(dir + "/cmdline")
	if err != nil {
		return Process{}, err
	}
	p := Process{PID: pid}
	if cmd = bytes.TrimRight(cmd, "\x00"); len(cmd) > 0 {
		p.Argv = strings.Split(string(cmd), "\x00")
	}
	p.Exe, _ = os.Readlink(dir + "/exe")
	if boot, err := bootTime(); err == nil {
		p.Started = boot.Add(time.Duration(st.start) * (time.Second / userHZ))
	}
	return p, nil
}

// bootTime reads btime from /proc/stat.
func bootTime() (time.Time, error) {
	b, err := readProcFile("/proc/stat")
	if err != nil {
		return time.Time{}, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("/proc/stat: btime %q: %w", v, err)
			}
			return time.Unix(s, 0), nil
		}
	}
	return time.Time{}, errors.New("/proc/stat: no btime")
}
