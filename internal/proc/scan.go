package proc

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
)

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
	for _, fd := range procfs.FDs(pid) {
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
		if id, ok := procfs.FDFile(pid, fd); ok && id == (procfs.FileID{Dev: o.dev, Ino: o.ino}) {
			return true
		}
	}
	return false
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
	return procfs.ThreadChildren(self, self)
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
		kids, _ := procfs.Children(pid) // ok is only false for this process's own
		add(kids)
	}
	return out
}
