package lock

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// procRoot is where procfs is mounted.
const procRoot = "/proc"

// userHZ is the unit of /proc/PID/stat's start time: USER_HZ, 100 on every
// architecture Go supports on Linux.
const userHZ = 100

// fileID identifies a file the way the kernel's lock table does.
type fileID struct{ dev, ino uint64 }

func idOf(fi os.FileInfo) fileID {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}
	}
	return fileID{dev: st.Dev, ino: st.Ino}
}

// procLock is one granted flock(2) lock from /proc/locks.
type procLock struct {
	pid          int // who took it; 0 (or a reused pid) once that process is gone
	write        bool
	major, minor uint32
	ino          uint64
}

// parseProcLocks reads /proc/locks lines such as
//
//	1: FLOCK  ADVISORY  WRITE 12345 08:01:1234567 0 EOF
//
// keeping granted FLOCK locks only: POSIX and OFD locks do not conflict
// with flock(2) on Linux, and "->" lines are waiters holding nothing.
// Device numbers are hex, the inode decimal.
func parseProcLocks(r io.Reader) []procLock {
	var out []procLock
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[1] != "FLOCK" {
			continue
		}
		pid, err := strconv.Atoi(f[4])
		dev := strings.Split(f[5], ":")
		if err != nil || len(dev) != 3 {
			continue
		}
		major, err1 := strconv.ParseUint(dev[0], 16, 32)
		minor, err2 := strconv.ParseUint(dev[1], 16, 32)
		ino, err3 := strconv.ParseUint(dev[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		out = append(out, procLock{pid: pid, write: f[3] == "WRITE",
			major: uint32(major), minor: uint32(minor), ino: ino})
	}
	return out
}

// readProcLocks returns every granted flock(2) lock of the machine, or
// nil without a readable /proc/locks (callers then fall back to probing).
func readProcLocks() []procLock {
	f, err := os.Open(filepath.Join(procRoot, "locks"))
	if err != nil {
		return nil
	}
	defer f.Close()
	return parseProcLocks(f)
}

// locksOn returns the locks of all that are on the file.
func locksOn(all []procLock, id fileID) []procLock {
	major, minor := unix.Major(id.dev), unix.Minor(id.dev)
	var out []procLock
	for _, lk := range all {
		if lk.ino == id.ino && lk.major == major && lk.minor == minor {
			out = append(out, lk)
		}
	}
	return out
}

// classify names the holder of a held lock. /proc/locks gives the pid that
// took the lock, but that process may be gone while the run's survivors
// still hold the file (the pid then reads 0, or the entry is hidden), and
// for `flock -n FILE cmd` it is flock(1)'s pid. So, in order:
//   - the locker is the record's pid or supervisor_pid, or this process
//     (which may not have written its record yet): cronvisor's;
//   - the locker is alive and has the file open: a foreign program;
//   - otherwise look at every process with the file open: one that is the
//     record's pid or supervisor, or carries CRONVISOR_RUN_ID of the
//     record's run in its environment (a survivor of that run), makes it
//     cronvisor's; else the first such process is a foreign holder;
//   - nothing visible (another pid namespace): trust the record if any.
func (l *FileLocker) classify(rec Holder, haveRec bool, lockers []procLock, id fileID) Holder {
	self := os.Getpid()
	for _, lk := range lockers {
		if lk.pid == self && !haveRec {
			return Holder{PID: self, Host: l.host, SupervisorPID: self}
		}
		if lk.pid > 0 && (lk.pid == self || lk.pid == rec.PID || lk.pid == rec.SupervisorPID) {
			return rec
		}
	}
	for _, lk := range lockers {
		if lk.pid > 0 && lk.pid != self && hasOpen(lk.pid, id) {
			return l.foreign(lk.pid)
		}
	}
	openers := openersOf(id, self)
	if haveRec {
		for _, pid := range openers {
			if pid == rec.PID || pid == rec.SupervisorPID || hasRunEnv(pid, rec.RunID) {
				return rec
			}
		}
	}
	switch {
	case len(openers) > 0:
		return l.foreign(openers[0])
	case haveRec:
		return rec
	case len(lockers) > 0:
		return l.foreign(lockers[0].pid)
	}
	return l.foreign(0)
}

// foreign describes a holder outside cronvisor from its /proc entry.
func (l *FileLocker) foreign(pid int) Holder {
	h := Holder{PID: pid, Host: l.host, Foreign: true}
	if pid > 0 {
		h.Cmdline = cmdline(pid)
		h.Since = startTime(pid)
	}
	return h
}

// hasOpen reports whether process pid has a descriptor on the file. It
// compares dev/inode through stat of the /proc/PID/fd links, so renames and
// mount namespaces do not matter; sockets, pipes and the like are skipped
// by their link text without a stat.
func hasOpen(pid int, id fileID) bool {
	dir := filepath.Join(procRoot, strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		p := filepath.Join(dir, fd.Name())
		if target, err := os.Readlink(p); err != nil || !strings.HasPrefix(target, "/") {
			continue
		}
		if fi, err := os.Stat(p); err == nil && idOf(fi) == id {
			return true
		}
	}
	return false
}

// openersOf lists, in pid order, the processes other than self that have
// the file open.
func openersOf(id fileID, self int) []int {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err == nil && pid != self && hasOpen(pid, id) {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids
}

// hasRunEnv reports whether the process started with CRONVISOR_RUN_ID set
// to runID, which every process of a run inherits.
func hasRunEnv(pid int, runID string) bool {
	if runID == "" {
		return false
	}
	data, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "environ"))
	if err != nil {
		return false
	}
	want := []byte("CRONVISOR_RUN_ID=" + runID)
	return slices.ContainsFunc(bytes.Split(data, []byte{0}), func(kv []byte) bool {
		return bytes.Equal(kv, want)
	})
}

// cmdline returns the process's command line with NULs as spaces.
func cmdline(pid int) string {
	data, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return ""
	}
	return string(bytes.ReplaceAll(bytes.TrimRight(data, "\x00"), []byte{0}, []byte{' '}))
}

// startTime returns when the process started, or the zero time.
func startTime(pid int) time.Time {
	data, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return time.Time{}
	}
	// The command name in parentheses may hold spaces; fields after it
	// start at field 3, and starttime is field 22.
	i := bytes.LastIndexByte(data, ')')
	f := strings.Fields(string(data[i+1:]))
	if i < 0 || len(f) < 20 {
		return time.Time{}
	}
	ticks, err := strconv.ParseInt(f[19], 10, 64)
	boot := bootTime()
	if err != nil || boot.IsZero() {
		return time.Time{}
	}
	return boot.Add(time.Duration(ticks) * (time.Second / userHZ))
}

// bootTime reads btime from /proc/stat.
func bootTime() time.Time {
	data, err := os.ReadFile(filepath.Join(procRoot, "stat"))
	if err != nil {
		return time.Time{}
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			if s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return time.Unix(s, 0)
			}
		}
	}
	return time.Time{}
}
