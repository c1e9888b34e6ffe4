package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// procStat is the part of /proc/PID/stat that proc needs.
type procStat struct {
	state byte // R, S, D, Z, …
	ppid  int
	pgrp  int
	start uint64 // start time in clock ticks: tells a reused pid apart
}

// alive reports whether the process can still run code; a zombie (or one
// being reaped) has exited and is only waiting to be collected.
func (s procStat) alive() bool { return s.state != 'Z' && s.state != 'X' }

// pids lists the processes currently in /proc.
func pids() ([]int, error) {
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

// readProcFile reads a /proc file whole. os.ReadFile offers the file to
// the runtime's poller and stats it first (procfs reports size 0): six
// system calls of its nine for nothing, and a run's end reads a few such
// files (see BENCHMARKS.md).
func readProcFile(path string) ([]byte, error) {
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

func readStat(pid int) (procStat, error) {
	b, err := readProcFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	// The command name (field 2) may contain spaces and parentheses; it ends
	// at the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(string(b[i+2:])) // f[0] is field 3 (state)
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	s := procStat{state: f[0][0]}
	s.ppid, _ = strconv.Atoi(f[1])
	s.pgrp, _ = strconv.Atoi(f[2])
	s.start, _ = strconv.ParseUint(f[19], 10, 64) // field 22
	return s, nil
}

// hasEnv reports whether the initial environment of pid holds entry exactly.
func hasEnv(pid int, entry []byte) bool {
	b, err := readProcFile("/proc/" + strconv.Itoa(pid) + "/environ")
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

// kcmpFile is KCMP_FILE from linux/kcmp.h (not in x/sys/unix).
const kcmpFile = 0

// openFile identifies an open file description of this process: the run's
// lock file, shared by fork and exec with every process of the run.
type openFile struct {
	fd       int
	dev, ino uint64
	noKcmp   bool // kcmp(2) is missing from this kernel: compare dev/inode only
}

func newOpenFile(f *os.File) (*openFile, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, fmt.Errorf("lock file %s: %w", f.Name(), err)
	}
	return &openFile{fd: int(f.Fd()), dev: st.Dev, ino: st.Ino}, nil
}

// heldBy reports whether pid has the same open file description. kcmp makes
// the difference between a process that inherited it (part of the run, and
// holding the flock) and one that opened the same file itself, such as
// flock(1) waiting for the lock; the dev/inode check alone cannot.
func (o *openFile) heldBy(self, pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	for _, n := range names {
		fd, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if !o.noKcmp {
			r, _, errno := unix.Syscall6(unix.SYS_KCMP, uintptr(self), uintptr(pid), kcmpFile, uintptr(o.fd), uintptr(fd), 0)
			if errno == 0 && r == 0 {
				return true
			}
			if !errors.Is(errno, unix.ENOSYS) {
				continue
			}
			o.noKcmp = true
		}
		var st unix.Stat_t
		if unix.Stat(dir+n, &st) == nil && st.Dev == o.dev && st.Ino == o.ino {
			return true
		}
	}
	return false
}

// childrenOf lists pid's children from /proc/PID/task/*/children (each
// thread's own children: a Go supervisor forks from any of its threads).
// ok is false when the kernel has no such file (CONFIG_PROC_CHILDREN off).
func childrenOf(pid int) (kids []int, ok bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, true // it exited meanwhile: no children to list
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		k, ok := threadChildren(pid, tid)
		if !ok && pid == os.Getpid() {
			return nil, false // our own task dir exists: the file is not supported
		}
		kids = append(kids, k...)
	}
	return kids, true
}

// threadChildren lists the children of one thread of pid. ok is false
// when the file does not exist (the thread is gone, or the kernel cannot
// list children).
func threadChildren(pid, tid int) (kids []int, ok bool) {
	b, err := readProcFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/children")
	if errors.Is(err, os.ErrNotExist) {
		return nil, false
	}
	for _, f := range strings.Fields(string(b)) {
		if kid, err := strconv.Atoi(f); err == nil {
			kids = append(kids, kid)
		}
	}
	return kids, true
}

// orphans lists the children of this process's leader thread. That is
// where the kernel reparents the orphans of a child subreaper: it gives
// them to the first live thread of the subreaper (find_new_reaper), the
// leader, which a Go program never ends. The other threads' children are
// the processes they forked: run mains, which Run knows by pid. Reading
// one thread's list instead of every thread's (a Go program has a dozen)
// was a fifth of a guarded run's CPU (BENCHMARKS.md).
func orphans() (kids []int, ok bool) {
	self := os.Getpid()
	return threadChildren(self, self)
}

// subtrees lists roots and all their descendants, breadth first, but for
// the processes prune picks and what descends from them (prune may be nil).
func subtrees(roots []int, prune func(pid int) bool) (out []int) {
	var queue []int
	seen := map[int]bool{}
	add := func(pids []int) {
		for _, p := range pids {
			if !seen[p] && (prune == nil || !prune(p)) {
				seen[p] = true
				out = append(out, p)
				queue = append(queue, p)
			}
		}
	}
	add(roots)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		kids, _ := childrenOf(pid) // ok is only false for this process's own
		add(kids)
	}
	return out
}
