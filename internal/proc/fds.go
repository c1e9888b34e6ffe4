package proc

import (
	"errors"
	"math"
	"os"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
)

// CloseInheritedOnExec marks every descriptor above stderr close-on-exec,
// so that what this process starts (a job, a notification command, a
// keeper) gets only stdin, stdout, stderr and the descriptors handed to
// it on purpose (exec.Cmd.ExtraFiles, which os/exec dup2s past the flag):
// a run's lock as fd 3, a keeper's tether, lock, pipes and session. A
// process started from a shell inherits that shell's open descriptors (a
// login shell's fd 10 and 255, say), and without this every job would
// too, as cron's children do not. Go opens its own descriptors
// close-on-exec already; only inherited ones are concerned, so the call
// belongs at the start of main, before anything is started. Nothing is
// inherited on purpose: cronvisor takes no socket activation (LISTEN_FDS)
// and finds systemd's notify socket by its path (NOTIFY_SOCKET).
//
// close_range(2) with CLOSE_RANGE_CLOEXEC does it in one call (Linux
// 5.11); older kernels get each descriptor listed in /proc/self/fd marked
// with fcntl(2).
func CloseInheritedOnExec() error {
	if cloexecRange() == nil {
		return nil
	}
	return cloexecListed()
}

// cloexecRange marks descriptors 3 and up with close_range(2).
func cloexecRange() error {
	return unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
}

// cloexecListed marks the descriptors above stderr that /proc/self/fd
// lists. EBADF is the listing's own descriptor, closed since.
func cloexecListed() error {
	fds := procfs.FDs(os.Getpid())
	if fds == nil {
		return errors.New("mark inherited descriptors close-on-exec: cannot list /proc/self/fd")
	}
	for _, fd := range fds {
		if fd <= 2 {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return os.NewSyscallError("fcntl F_SETFD", err)
		}
	}
	return nil
}
