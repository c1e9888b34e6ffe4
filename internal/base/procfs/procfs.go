// Package procfs is cronvisor's one reader of /proc: process status, start
// times, command lines and environments, open descriptors, children, the
// kernel's flock table and listening unix sockets. It reads and parses;
// what a process means to a run (part of it, a holder, a supervisor) is
// its callers' business.
package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// userHZ is the unit of /proc/PID/stat's start time: USER_HZ, 100 on every
// architecture Go supports on Linux.
const userHZ = 100

// ErrExited is returned by Lookup for a process that has exited and is
// waiting to be reaped (a zombie).
var ErrExited = errors.New("process has exited")

func dir(pid int) string { return "/proc/" + strconv.Itoa(pid) }

// ReadFile reads a /proc file whole. os.ReadFile offers the file to the
// runtime's poller and stats it first (procfs reports size 0): most of its
// system calls for nothing, and a run's end reads a few such files.
func ReadFile(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	b := make([]byte, 0, 512)
	for {
		n, err := unix.Read(fd, b[len(b):cap(b)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow
		}
	}
}

// PIDs lists the processes currently in /proc.
func PIDs() ([]int, error) {
	f, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(names))
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out, nil
}

// Stat is the part of /proc/PID/stat that cronvisor needs.
type Stat struct {
	State byte // R, S, D, Z, …
	PPID  int
	PGRP  int
	Start uint64 // start time in clock ticks since boot: tells a reused pid apart
	// Execing: the process is inside execve, between dropping the old
	// memory map and laying out the new one's arguments and environment;
	// until then its cmdline and environ read empty.
	Execing bool
}

// Alive reports whether the process can still run code; a zombie (or one
// being reaped) has exited and is only waiting to be collected.
func (s Stat) Alive() bool { return s.State != 'Z' && s.State != 'X' }

// ReadStat reads /proc/PID/stat.
func ReadStat(pid int) (Stat, error) {
	b, err := ReadFile(dir(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	return parseStat(pid, b)
}

func parseStat(pid int, b []byte) (Stat, error) {
	// The command name (field 2) may contain spaces and parentheses; it ends
	// at the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return Stat{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(string(b[i+2:])) // f[0] is field 3 (state)
	if len(f) < 20 {
		return Stat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	s := Stat{State: f[0][0]}
	s.PPID, _ = strconv.Atoi(f[1])
	s.PGRP, _ = strconv.Atoi(f[2])
	s.Start, _ = strconv.ParseUint(f[19], 10, 64) // field 22
	// env_end is field 51 (Linux 3.5 and later), the flags field 9.
	if len(f) >= 49 {
		flags, _ := strconv.ParseUint(f[6], 10, 64)
		s.Execing = flags&pfKthread == 0 && s.Alive() && f[48] == "0"
	}
	return s, nil
}

// pfKthread is the kernel's PF_KTHREAD flag: a kernel thread has no
// environment to wait for.
const pfKthread = 0x00200000

// execWait bounds how long a reader of cmdline or environ waits out an
// execve in progress; the window is the kernel loading one executable.
const execWait = 20 * time.Millisecond

// readExeced reads /proc/PID/name (cmdline or environ). Go's Start, like
// vfork, returns once the child has dropped its parent's memory map, a
// moment before the kernel writes the new program's arguments and
// environment, when both read empty: an empty read of a process still
// inside execve is read again.
func readExeced(pid int, name string) ([]byte, error) {
	deadline := time.Now().Add(execWait)
	for {
		b, err := ReadFile(dir(pid) + "/" + name)
		if err != nil || len(b) > 0 {
			return b, err
		}
		st, err := ReadStat(pid)
		if err != nil || time.Now().After(deadline) {
			return b, nil
		}
		if !st.Execing {
			// The execve may have ended between the two reads.
			return ReadFile(dir(pid) + "/" + name)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// HasEnv reports whether the initial environment of pid holds entry
// ("NAME=value") exactly.
func HasEnv(pid int, entry []byte) bool {
	b, err := readExeced(pid, "environ")
	if err != nil || !bytes.Contains(b, entry) {
		return false
	}
	for e := range bytes.SplitSeq(b, []byte{0}) {
		if bytes.Equal(e, entry) {
			return true
		}
	}
	return false
}

// Argv is pid's command line from /proc/PID/cmdline; empty for kernel
// threads.
func Argv(pid int) ([]string, error) {
	cmd, err := readExeced(pid, "cmdline")
	if err != nil {
		return nil, err
	}
	if cmd = bytes.TrimRight(cmd, "\x00"); len(cmd) == 0 {
		return nil, nil
	}
	return strings.Split(string(cmd), "\x00"), nil
}

// BootTime reads btime from /proc/stat.
func BootTime() (time.Time, error) {
	b, err := ReadFile("/proc/stat")
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

// Started is when a process whose Stat.Start is ticks started, exact to
// within a second (the boot time it counts from is whole seconds); zero
// without a readable boot time.
func Started(ticks uint64) time.Time {
	boot, err := BootTime()
	if err != nil {
		return time.Time{}
	}
	return boot.Add(time.Duration(ticks) * (time.Second / userHZ))
}

// Process is what /proc says about a live process.
type Process struct {
	PID     int
	Argv    []string // empty for kernel threads
	Exe     string   // the /proc/PID/exe link; "" if this process may not read it
	Started time.Time
}

// Lookup describes the live process pid.
func Lookup(pid int) (Process, error) {
	st, err := ReadStat(pid)
	if err != nil {
		return Process{}, err
	}
	if !st.Alive() {
		return Process{}, fmt.Errorf("pid %d: %w", pid, ErrExited)
	}
	argv, err := Argv(pid)
	if err != nil {
		return Process{}, err
	}
	p := Process{PID: pid, Argv: argv, Started: Started(st.Start)}
	p.Exe, _ = os.Readlink(dir(pid) + "/exe")
	return p, nil
}
