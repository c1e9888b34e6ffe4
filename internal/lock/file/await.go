package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
)

// recheckHidden is how long AwaitRelease waits before it looks again at a
// lock whose holders it cannot see, or cannot watch.
const recheckHidden = time.Second

// AwaitRelease returns once no process holds the lock for run runID any
// more: the lock is free, held by a program outside cronvisor, or its
// record names another run (someone took the lock since). A lock that
// holds no record of runID returns at once.
//
// It never takes the lock (but for Inspect's probe, which acquirers
// already tell from a holder: see transientHolders), so a fire elsewhere
// is never refused because of it. It waits instead for the exit of every
// process that has the lock file open, through pidfd_open(2), and looks
// again at each exit. A flock is released when the last descriptor of its
// open file description closes, which for an exiting process happens
// before its pidfd reports the exit: the look after the wake-up sees the
// lock free, with no delay. A holder that forked before it exited is
// found by that look and watched in turn. Holders it cannot see (another
// pid namespace, /proc/PID/fd of another user) are looked at again every
// recheckHidden instead.
func (l *Locker) AwaitRelease(ctx context.Context, name, runID string) error {
	path, err := l.path(name)
	if err != nil {
		return err
	}
	for retried := false; ; {
		if err := ctx.Err(); err != nil {
			return err
		}
		st, err := l.inspect(name, path, false, procfs.Locks())
		if err != nil {
			return err
		}
		if !st.Held || st.Record.Foreign || st.Record.RunID != runID {
			return nil
		}
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		pids := procfs.Openers(procfs.IDOf(fi), os.Getpid())
		wait := time.Duration(-1) // until an exit
		switch {
		case slices.ContainsFunc(pids, func(pid int) bool { return l.ofRecord(pid, st.Record) }):
			retried = false
		case !retried:
			// The run's processes are not among those visible: they
			// may have exited between the look and the scan. Look
			// again at once, then every recheckHidden.
			retried = true
			continue
		default:
			wait = recheckHidden
		}
		if err := awaitExit(ctx, pids, wait); err != nil {
			return err
		}
	}
}

// awaitExit blocks until one of pids exits, wait passes (wait < 0: no
// limit) or ctx is done, and then returns ctx's error. A pid already gone
// returns at once; one that cannot be watched shortens wait to
// recheckHidden.
func awaitExit(ctx context.Context, pids []int, wait time.Duration) error {
	cancel, stop, err := cancelFD(ctx)
	if err != nil {
		return err
	}
	defer stop()
	fds := []unix.PollFd{{Fd: int32(cancel), Events: unix.POLLIN}}
	defer func() {
		for _, p := range fds[1:] {
			unix.Close(int(p.Fd))
		}
	}()
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		switch {
		case errors.Is(err, unix.ESRCH):
			return ctx.Err() // gone already: look again now
		case err != nil:
			wait = recheckHidden
			continue
		}
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	ms := -1
	if wait >= 0 {
		ms = int(wait.Milliseconds())
	}
	for {
		if _, err := unix.Poll(fds, ms); err != unix.EINTR {
			if err != nil {
				return fmt.Errorf("poll: %w", err)
			}
			return ctx.Err()
		}
	}
}

// cancelFD returns an eventfd that becomes readable when ctx is done, and
// the func that closes it. The close and the write share a mutex so that
// a late write never lands on a descriptor number reused meanwhile.
func cancelFD(ctx context.Context) (fd int, stop func(), err error) {
	fd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return -1, nil, fmt.Errorf("eventfd: %w", err)
	}
	var mu sync.Mutex
	closed := false
	unregister := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !closed {
			_, _ = unix.Write(fd, []byte{1, 0, 0, 0, 0, 0, 0, 0}) // non-zero in either byte order
		}
	})
	return fd, func() {
		unregister()
		mu.Lock()
		defer mu.Unlock()
		closed = true
		unix.Close(fd)
	}, nil
}
