package procfs

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// FileID identifies a file the way the kernel's lock table does.
type FileID struct{ Dev, Ino uint64 }

// IDOf is the identity of a file from its FileInfo (zero if it has none).
func IDOf(fi os.FileInfo) FileID {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return FileID{}
	}
	return FileID{Dev: st.Dev, Ino: st.Ino}
}

// FDs lists pid's open descriptors; nil when they cannot be read (the
// process is gone, or belongs to another user).
func FDs(pid int) []int {
	f, err := os.Open(dir(pid) + "/fd/")
	if err != nil {
		return nil
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	fds := make([]int, 0, len(names))
	for _, n := range names {
		if fd, err := strconv.Atoi(n); err == nil {
			fds = append(fds, fd)
		}
	}
	return fds
}

// FDFile is the identity of the file pid has open as fd. Sockets, pipes
// and the like are told by their link text, without a stat: ok is false
// for them, as for a descriptor that cannot be read.
func FDFile(pid, fd int) (id FileID, ok bool) {
	p := dir(pid) + "/fd/" + strconv.Itoa(fd)
	if target, err := os.Readlink(p); err != nil || !strings.HasPrefix(target, "/") {
		return FileID{}, false
	}
	var st unix.Stat_t
	if unix.Stat(p, &st) != nil {
		return FileID{}, false
	}
	return FileID{Dev: st.Dev, Ino: st.Ino}, true
}

// HasOpen reports whether process pid has a descriptor on the file. It
// compares dev/inode through stat of the /proc/PID/fd links, so renames
// and mount namespaces do not matter.
func HasOpen(pid int, id FileID) bool {
	return slices.ContainsFunc(FDs(pid), func(fd int) bool {
		got, ok := FDFile(pid, fd)
		return ok && got == id
	})
}

// Openers lists, in pid order, the processes other than except that have
// the file open.
func Openers(id FileID, except int) []int {
	all, err := PIDs()
	if err != nil {
		return nil
	}
	var pids []int
	for _, pid := range all {
		if pid != except && HasOpen(pid, id) {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids
}

// Children lists pid's children from /proc/PID/task/*/children (each
// thread's own children: a Go program forks from any of its threads).
// ok is false when the kernel has no such file (CONFIG_PROC_CHILDREN off).
func Children(pid int) (kids []int, ok bool) {
	tasks, err := os.ReadDir(dir(pid) + "/task")
	if err != nil {
		return nil, true // it exited meanwhile: no children to list
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		k, ok := ThreadChildren(pid, tid)
		if !ok && pid == os.Getpid() {
			return nil, false // our own task dir exists: the file is not supported
		}
		kids = append(kids, k...)
	}
	return kids, true
}

// ThreadChildren lists the children of one thread of pid. ok is false
// when the file does not exist (the thread is gone, or the kernel cannot
// list children).
func ThreadChildren(pid, tid int) (kids []int, ok bool) {
	b, err := ReadFile(dir(pid) + "/task/" + strconv.Itoa(tid) + "/children")
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
