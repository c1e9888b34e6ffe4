package proc

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ioprioWhoProcess is IOPRIO_WHO_PROCESS; a priority is class<<13|level.
const (
	ioprioWhoProcess = 1
	ioprioClassShift = 13
)

// SetupMain is the body of an exec shim, given its arguments after
// argv[0]. It applies the Setup to this process, switches to the run's
// user, group and directory, and execs the job with this process's
// environment, which is the job's. It returns only when that failed,
// with the shell's exit code (127: not found, 126: anything else), having
// told the supervisor why on the status pipe.
//
// Every step runs on one locked thread, the one that execs: a nice value
// and an I/O priority belong to a thread, and so do credentials set by
// the raw system calls (the runtime's all-threads ones are refused in a
// binary built with cgo); execve(2) keeps the calling thread's.
func SetupMain(args []string) int {
	runtime.LockOSThread()
	f, err := parseSetupFlags(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", SetupName, err)
		return ExitNotExecutable
	}
	// The job must not inherit the status pipe: its exec closes it.
	if _, err := unix.FcntlInt(uintptr(f.status), unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		fmt.Fprintf(os.Stderr, "%s: the status pipe: %v\n", SetupName, err)
		return ExitNotExecutable
	}
	status := os.NewFile(uintptr(f.status), "status")
	err = applySetup(&f.setup)
	if err == nil {
		err = switchTo(f.cred, f.dir)
	}
	if err == nil {
		err = execJob(f.path, f.argv)
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		errno = unix.EINVAL
	}
	fmt.Fprintf(status, "%d %v", int(errno), strings.TrimSuffix(err.Error(), ": "+errno.Error()))
	if errno == unix.ENOENT {
		return ExitNotFound
	}
	return ExitNotExecutable
}

// applyPriorities gives thread tid (0: this one) s's nice value and I/O
// priority.
func applyPriorities(s *Setup, tid int) error {
	if s.Nice != nil {
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, *s.Nice); err != nil {
			return fmt.Errorf("nice %d: %w", *s.Nice, err)
		}
	}
	if p := s.IOPrio; p != nil {
		prio := uintptr(p.Class<<ioprioClassShift | p.Level)
		if _, _, e := unix.RawSyscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, uintptr(tid), prio); e != 0 {
			return fmt.Errorf("ionice %d:%d: %w", p.Class, p.Level, e)
		}
	}
	return nil
}

// applySetup applies s to this process (and thread).
func applySetup(s *Setup) error {
	if err := applyPriorities(s, 0); err != nil {
		return err
	}
	if s.OOMScoreAdj != nil {
		v := strconv.Itoa(*s.OOMScoreAdj)
		if err := os.WriteFile("/proc/self/oom_score_adj", []byte(v), 0); err != nil {
			return fmt.Errorf("oom_score_adj %s: %w", v, err)
		}
	}
	for _, r := range s.Rlimits {
		v := rlimitValue(r)
		// syscall's, not unix's: it also stops syscall.Exec from putting
		// back the soft RLIMIT_NOFILE the runtime raised at start-up.
		if err := syscall.Setrlimit(r.Resource, &syscall.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("rlimit %d to %d: %w", r.Resource, v, err)
		}
	}
	return nil
}

// rlimitValue is the value r is set to: an RLIMIT_NOFILE of
// RLIM_INFINITY, which the kernel refuses, is fs.nr_open.
func rlimitValue(r Rlimit) uint64 {
	if r.Resource == unix.RLIMIT_NOFILE && r.Value == unix.RLIM_INFINITY {
		return nrOpen()
	}
	return r.Value
}

// nrOpen is the most open files the kernel allows a process.
func nrOpen() uint64 {
	b, err := os.ReadFile("/proc/sys/fs/nr_open")
	if v, perr := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && perr == nil {
		return v
	}
	return 1 << 20
}

// switchTo takes the run's credential, as os/exec would in the child
// (groups, then group, then user), and its working directory, which is
// entered as the run's user.
func switchTo(cred *syscall.Credential, dir string) error {
	if cred != nil {
		if err := setGroups(cred); err != nil {
			return err
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SETGID, uintptr(cred.Gid), 0, 0); e != 0 {
			return fmt.Errorf("setgid %d: %w", cred.Gid, e)
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SETUID, uintptr(cred.Uid), 0, 0); e != 0 {
			return fmt.Errorf("setuid %d: %w", cred.Uid, e)
		}
	}
	if dir != "" {
		if err := unix.Chdir(dir); err != nil {
			return fmt.Errorf("working directory %s: %w", dir, err)
		}
	}
	return nil
}

func setGroups(cred *syscall.Credential) error {
	if cred.NoSetGroups {
		return nil
	}
	groups := make([]int, len(cred.Groups))
	for i, g := range cred.Groups {
		groups[i] = int(g)
	}
	if err := unix.Setgroups(groups); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	return nil
}

// execJob replaces this process with the job: its argv, and this process's
// environment, the job's own.
func execJob(path string, argv []string) error {
	err := syscall.Exec(path, argv, os.Environ())
	return &os.PathError{Op: "exec", Path: path, Err: err}
}
