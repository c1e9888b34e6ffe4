package cgroup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Leaf is one run's cgroup: a child of the Hierarchy's Root that holds
// the run's processes and nothing else.
type Leaf struct {
	// Path is the leaf's directory.
	Path string
	dir  *os.File // the directory, for clone3's CLONE_INTO_CGROUP
	// dirFD is dir's descriptor, taken once: (*os.File).Fd makes a
	// system call at each call, and a run's end reads several files
	// relative to it.
	dirFD int
	// noMemory: the hierarchy that made the leaf has no memory
	// controller enabled for it, so it has no memory.peak or
	// memory.events for a run's end to look for. An opened leaf looks.
	noMemory bool
}

// Create makes the leaf name under h.Root, writes lim into it (refused,
// with the leaf removed, when a controller lim needs is not enabled), and
// opens it for a child to be started into (FD).
func (h *Hierarchy) Create(name string, lim Limits) (*Leaf, error) {
	if err := h.Check(lim); err != nil {
		return nil, err
	}
	path := filepath.Join(h.Root, name)
	if err := os.Mkdir(path, 0o755); err != nil {
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		// Left by an earlier attempt: reused only if empty, which
		// rmdir tells (it refuses a populated cgroup).
		if err := removeSubtree(path); err != nil {
			return nil, fmt.Errorf("cgroup %s exists and is in use: %w", path, err)
		}
		if err := os.Mkdir(path, 0o755); err != nil {
			return nil, err
		}
	}
	l := &Leaf{Path: path, noMemory: !slices.Contains(h.Controllers, "memory")}
	if err := lim.write(path); err != nil {
		_ = os.Remove(path)
		return nil, err
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(path)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	l.dir, l.dirFD = os.NewFile(uintptr(fd), path), fd
	return l, nil
}

// Open is an existing leaf (a keeper's, or recovery's, of a run it did
// not start); it has no FD.
func Open(path string) (*Leaf, error) {
	if _, err := os.Stat(filepath.Join(path, "cgroup.events")); err != nil {
		return nil, err
	}
	return &Leaf{Path: path}, nil
}

// FD is the leaf's directory descriptor, for exec.Cmd's
// SysProcAttr.CgroupFD (with UseCgroupFD): the child starts in the leaf,
// so no process of the run is ever outside it. -1 for an opened leaf.
func (l *Leaf) FD() int {
	if l.dir == nil {
		return -1
	}
	return l.dirFD
}

// SysProcAttr sets a's fields that start the child into the leaf.
func (l *Leaf) SysProcAttr(a *syscall.SysProcAttr) {
	a.UseCgroupFD, a.CgroupFD = true, l.FD()
}

// Close closes the leaf's descriptor; the cgroup stays.
func (l *Leaf) Close() {
	if l.dir != nil {
		l.dir.Close()
		l.dir = nil
	}
}

// Procs is the pids of the leaf's processes, those of the cgroups a job
// made below it included.
func (l *Leaf) Procs() ([]int, error) { return subtreeProcs(l.Path) }

// Signal sends sig to every process of the leaf and of the cgroups below
// it (as systemd's KillMode=control-group does with SIGTERM).
func (l *Leaf) Signal(sig syscall.Signal) error {
	pids, err := l.Procs()
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
	return err
}

// Kill SIGKILLs every process of the leaf and of the cgroups below it at
// once, those forked while it acts included (cgroup.kill).
func (l *Leaf) Kill() error {
	return os.WriteFile(filepath.Join(l.Path, "cgroup.kill"), []byte("1"), 0)
}

// Populated reads cgroup.events: whether a live process is in the leaf or
// in a cgroup below it.
func (l *Leaf) Populated() (bool, error) {
	v, err := l.keyed("cgroup.events", "populated")
	return v[0] != 0, err
}

// WaitEmpty returns once the leaf holds no process (cgroup.events says
// "populated 0"), or with ctx's error. The kernel signals a change of
// cgroup.events as a modification of the file: inotify wakes the wait,
// nothing polls.
func (l *Leaf) WaitEmpty(ctx context.Context) error {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return os.NewSyscallError("inotify_init1", err)
	}
	f := os.NewFile(uintptr(fd), "inotify") // non-blocking: the poller takes it
	defer f.Close()
	if _, err := unix.InotifyAddWatch(fd, filepath.Join(l.Path, "cgroup.events"), unix.IN_MODIFY); err != nil {
		return os.NewSyscallError("inotify_add_watch", err)
	}
	// Wakes the read below when ctx ends; stop waits for nothing, as
	// the function only sets a deadline.
	stop := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Now()) })
	defer stop()
	buf := make([]byte, 4096)
	for {
		full, err := l.Populated()
		if err != nil || !full {
			return err
		}
		if _, err := f.Read(buf); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
	}
}

// Remove removes the leaf, which must be empty, with the cgroups a job
// made below it, deepest first; a leaf already gone is no error. The
// error names each cgroup that could not be removed.
func (l *Leaf) Remove() error {
	l.Close()
	return removeSubtree(l.Path)
}

// keyed reads the values of keys from the leaf's flat keyed file name
// ("key value" lines: cgroup.events, cpu.stat, memory.events).
func (l *Leaf) keyed(name string, keys ...string) ([]int64, error) {
	out := make([]int64, len(keys))
	err := l.parse(name, func(b []byte) error {
		found := 0
		for line := range bytes.Lines(b) {
			k, v, ok := bytes.Cut(bytes.TrimSpace(line), []byte(" "))
			if i := slices.IndexFunc(keys, func(key string) bool { return string(k) == key }); ok && i >= 0 {
				var err error
				if out[i], err = strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64); err != nil {
					return fmt.Errorf("%s: %s: %w", filepath.Join(l.Path, name), k, err)
				}
				found++
			}
		}
		if found < len(keys) {
			return fmt.Errorf("%s: no %s", filepath.Join(l.Path, name), strings.Join(keys, " or "))
		}
		return nil
	})
	return out, err
}

// parse reads the leaf's interface file name into a kept buffer and
// hands its content to f, which must not keep it.
func (l *Leaf) parse(name string, f func(content []byte) error) error {
	small := smallBufs.Get().(*[smallRead]byte)
	defer smallBufs.Put(small)
	b, err := l.read(name, small[:0])
	if err != nil {
		return err
	}
	return f(b)
}

// smallRead is the buffer that the files read at a run's end fit in (a
// longer one is read into a grown copy); they are kept for the next
// reads, as a page allocated for each read was most of what a run's end
// allocated.
const smallRead = 512

var smallBufs = sync.Pool{New: func() any { return new([smallRead]byte) }}

// read reads the leaf's interface file name with plain system calls (a
// run's end reads several: no runtime poller set-up), relative to the
// leaf's directory while it is open, so that the kernel does not walk
// the whole path for each; into buf's spare capacity, grown if need be.
func (l *Leaf) read(name string, buf []byte) ([]byte, error) {
	dir, path := l.dirFD, name
	if l.dir == nil {
		dir, path = unix.AT_FDCWD, filepath.Join(l.Path, name)
	}
	fd, err := unix.Openat(dir, path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(l.Path, name), Err: err}
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: filepath.Join(l.Path, name), Err: err}
		}
		buf = buf[:len(buf)+n]
		// The files read here are seq_files of one record under a page:
		// a read returns all of it when it fits, so one that did not
		// fill the buffer was the last (no read for the end of file).
		if n == 0 || len(buf) < cap(buf) {
			return buf, nil
		}
		buf = slices.Grow(buf, len(buf))
	}
}
