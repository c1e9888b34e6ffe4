package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A run whose Setup holds more than a thread can pass on (oom_score_adj,
// resource limits) is started stopped at its exec: the child asks to be
// traced (PTRACE_TRACEME) just before its execve(2), so the kernel stops
// it with SIGTRAP once the job's program is loaded and before its first
// instruction; the supervisor applies the Setup to the stopped process
// (prlimit(2), /proc/PID/oom_score_adj, setpriority, ioprio_set) and
// detaches, which lets it go. The job's first instruction already has
// every setting, as with the exec shim, without re-executing this binary.
//
// The settings apply after the exec rather than before it, which only
// tells for RLIMIT_NPROC: a user already over it gets a job that runs and
// cannot fork, where the shim's exec would have failed with EAGAIN.
//
// Where tracing is refused (Yama's ptrace_scope 3, a seccomp profile), or
// this process may not trace what it starts (without CAP_SYS_PTRACE, a
// set-user-ID program would lose its privilege under the trace), runs go
// through the shim as before (see SetupName).
//
// The trace only covers the few instructions between PTRACE_TRACEME and
// the exec, and the stop after it; a signal that reached the child in
// that gap would stop it while the supervisor's thread waits for the
// vfork to complete. The child is then in a process group of its own that
// nobody has the id of yet, so only a signal to every process (shutdown's,
// followed by SIGKILL) can land there. If the supervisor dies while the
// child is stopped, the kernel detaches it and delivers the SIGTRAP,
// whose default ends it before its first instruction; only a death in the
// microseconds between its exec and that stop lets the job run without
// its settings.

// traceUsable reports, once per process, whether runs can be started
// traced: the probe starts this executable traced and kills it at its
// exec, so no code of it runs.
var traceUsable = sync.OnceValue(func() bool { return probeTrace() == nil })

func probeTrace() error {
	if !mayTraceFreely() {
		return errors.New("no CAP_SYS_PTRACE")
	}
	stdin, err := devNull()
	if err != nil {
		return err
	}
	cmd := &exec.Cmd{Path: keeperExe, Args: []string{SetupName}, Stdin: stdin,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	stopped := false
	err = startTraced(cmd, func() error { return startRegistered(cmd) }, func(int) error {
		stopped = true
		return errProbeDone // kill it: its code is not to run
	})
	if stopped {
		return nil
	}
	return err
}

var errProbeDone = errors.New("the probe stopped at its exec")

// mayTraceFreely reports whether this process has CAP_SYS_PTRACE, so that
// a set-user-ID program it starts traced keeps its privilege.
func mayTraceFreely() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[unix.CAP_SYS_PTRACE/32].Effective&(1<<(unix.CAP_SYS_PTRACE%32)) != 0
}

// startTraced starts cmd (through start) traced, waits for its stop at
// the exec, calls apply with its pid, and lets it go. If apply fails, the
// process is killed before its first instruction and reaped, and the
// error returned.
func startTraced(cmd *exec.Cmd, start func() error, apply func(pid int) error) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Ptrace = true
	errc := make(chan error, 1)
	go func() {
		// The thread that forks is the tracer: only it may detach.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		errc <- traceStart(cmd, start, apply)
	}()
	return <-errc
}

// traceStart is startTraced on the tracer's thread.
func traceStart(cmd *exec.Cmd, start func() error, apply func(pid int) error) error {
	if err := start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	stopped, err := stoppedAtExec(pid)
	if !stopped && err == nil {
		return nil // a signal passed on to it ended it: its end is the run's
	}
	if err == nil {
		err = apply(pid)
	}
	if err != nil {
		_ = unix.Kill(pid, unix.SIGKILL) // stopped: it dies before its first instruction
	}
	_ = unix.PtraceDetach(pid)
	if err != nil {
		_ = cmd.Wait()
		unregister(pid)
	}
	return err
}

// stoppedAtExec waits for traced child pid's stop at its exec (SIGTRAP).
// A stop for another signal, one that reached it before that stop, passes
// the signal on; if that signal ends it, stopped is false and its exit is
// left unreaped, for the caller's Wait.
func stoppedAtExec(pid int) (stopped bool, err error) {
	for range maxPassedOn {
		var info unix.Siginfo
		if err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WEXITED|unix.WNOWAIT, nil); err != nil {
			return false, os.NewSyscallError("waitid", err)
		}
		code, status := siginfoCode(&info)
		if code != cldTrapped && code != cldStopped {
			return false, nil
		}
		// Taken, so that it is not seen again.
		if err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED, nil); err != nil {
			return false, os.NewSyscallError("waitid", err)
		}
		if syscall.Signal(status) == syscall.SIGTRAP {
			return true, nil
		}
		if err := unix.PtraceCont(pid, status); err != nil {
			return false, os.NewSyscallError("ptrace", err)
		}
	}
	return false, fmt.Errorf("the run's process was stopped %d times before its exec's stop", maxPassedOn)
}

// maxPassedOn bounds the signals passed on before the stop at the exec:
// a stop signal (SIGSTOP, SIGTSTP) stops it again each time.
const maxPassedOn = 8

// The si_code values of a SIGCHLD for a stop (waitid(2)).
const (
	cldTrapped = 4
	cldStopped = 5
)

// siginfoCode reads si_code and si_status of a waitid(2) result: the
// union after si_code is aligned to a pointer, and si_status follows
// si_pid and si_uid in it.
func siginfoCode(info *unix.Siginfo) (code, status int) {
	const word = unsafe.Sizeof(uintptr(0))
	const union = (unsafe.Offsetof(info.Code) + unsafe.Sizeof(info.Code) + word - 1) &^ (word - 1)
	base := unsafe.Pointer(info)
	return int(info.Code), int(*(*int32)(unsafe.Add(base, union+8)))
}

// applyToProcess applies s to process pid, stopped before its first
// instruction.
func applyToProcess(s *Setup, pid int) error {
	if err := applyPriorities(s, pid); err != nil {
		return err
	}
	if s.OOMScoreAdj != nil {
		v := strconv.Itoa(*s.OOMScoreAdj)
		if err := os.WriteFile("/proc/"+strconv.Itoa(pid)+"/oom_score_adj", []byte(v), 0); err != nil {
			return fmt.Errorf("oom_score_adj %s: %w", v, err)
		}
	}
	for _, r := range s.Rlimits {
		v := rlimitValue(r)
		if err := unix.Prlimit(pid, r.Resource, &unix.Rlimit{Cur: v, Max: v}, nil); err != nil {
			return fmt.Errorf("rlimit %d to %d: %w", r.Resource, v, err)
		}
	}
	return nil
}
