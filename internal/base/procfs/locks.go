package procfs

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Lock is one granted flock(2) lock from /proc/locks.
type Lock struct {
	PID          int // who took it; 0 (or a reused pid) once that process is gone
	Write        bool
	Major, Minor uint32
	Ino          uint64
}

// On reports whether the lock is on the file.
func (lk Lock) On(id FileID) bool {
	return lk.Ino == id.Ino && lk.Major == unix.Major(id.Dev) && lk.Minor == unix.Minor(id.Dev)
}

// ParseLocks reads /proc/locks lines such as
//
//	1: FLOCK  ADVISORY  WRITE 12345 08:01:1234567 0 EOF
//
// keeping granted FLOCK locks only: POSIX and OFD locks do not conflict
// with flock(2) on Linux, and "->" lines are waiters holding nothing.
// Device numbers are hex, the inode decimal.
func ParseLocks(r io.Reader) []Lock {
	var out []Lock
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
		out = append(out, Lock{PID: pid, Write: f[3] == "WRITE",
			Major: uint32(major), Minor: uint32(minor), Ino: ino})
	}
	return out
}

// Locks returns every granted flock(2) lock of the machine, or nil
// without a readable /proc/locks.
func Locks() []Lock {
	f, err := os.Open("/proc/locks")
	if err != nil {
		return nil
	}
	defer f.Close()
	return ParseLocks(f)
}

// Listening reports whether /proc/net/unix lists a listening socket bound
// at path. Any user may read it; it names the bound path, not the file's
// current owner, so it says only that someone listens there.
func Listening(path string) bool {
	data, err := ReadFile("/proc/net/unix")
	if err != nil {
		return false
	}
	// Num RefCount Protocol Flags Type St Inode Path; flag 00010000 is
	// __SO_ACCEPTCON, a listening socket.
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) == 8 && f[7] == path && f[3] == "00010000" {
			return true
		}
	}
	return false
}
