package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// endedByItself reports whether the main process has exited, reaped or
// not, when the run's end was decided for another cause: reap first,
// then judge the deadline. A process that had already exited when the
// end of ctx was noticed (it exited just then, or the supervisor was
// frozen past the deadline, its timer and the child's exit delivered
// together when it was continued) ended by itself, and its exit is the
// outcome. Only a process still running is ended and judged by ctx.
func endedByItself(pid int, waited <-chan struct{}) bool {
	return isClosed(waited) || exited(pid)
}

// awaitExit parks the calling goroutine on the runtime's poller until pid,
// a child of this process, has exited (its pidfd turns readable), for
// cmd.Wait to reap it at once. cmd.Wait alone blocks a thread in waitid(2)
// for the whole run, and while a thread is in a system call the runtime's
// monitor thread polls every 20 µs: tens of wake-ups for every
// millisecond of every run. Where the pidfd cannot be polled, it returns
// and cmd.Wait waits as before.
func awaitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd") // non-blocking: the poller takes it
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Read(func(uintptr) bool { return exited(pid) })
}

// exited reports whether pid, a child of this process, has exited, reaped
// or not. WNOWAIT leaves a zombie's status to cmd.Wait.
func exited(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if errors.Is(err, unix.ECHILD) {
		return true // reaped already, by cmd.Wait
	}
	// With WNOHANG and nothing to report, the kernel leaves info zeroed.
	return err == nil && info.Signo == int32(unix.SIGCHLD)
}

// ctxOutcome classifies a done context.
func ctxOutcome(ctx context.Context) (Outcome, error) {
	cause := context.Cause(ctx)
	if errors.Is(cause, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return TimedOut, cause
	}
	return Canceled, cause
}

// setExit fills the exit code and signal once the main process was reaped.
func setExit(res *Result, cmd *exec.Cmd, waited <-chan struct{}) {
	select {
	case <-waited:
	default:
		return // it survived SIGKILL; ErrSurvivors is in Err
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case !ok:
	case ws.Exited():
		res.ExitCode = ws.ExitStatus()
	case ws.Signaled():
		res.ExitCode = 128 + int(ws.Signal())
		res.Signal = unix.SignalName(ws.Signal())
	}
}
