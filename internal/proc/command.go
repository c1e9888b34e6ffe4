package proc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// startFailed reports a run that did not start: 127 when the command or
// its directory is not there, 126 for every other reason (permissions, a
// bad format, an environment over the kernel's limit), as the shell does.
func startFailed(res Result, err error) Result {
	res.Outcome, res.Err = StartFailed, err
	res.ExitCode = ExitNotExecutable
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrNoCommand) {
		res.ExitCode = ExitNotFound
	}
	res.Started, res.Ended = time.Now(), time.Now()
	return res
}

// devNull is the runs' standard input, opened once: os/exec opens
// /dev/null for every command without Stdin (six system calls with the
// poller's attempt to take it). Every child gets its own descriptor of it;
// os/exec never closes a Stdin it was given. It is process-wide because
// every run of every supervisor in the process can share the one read-only
// descriptor, which is never closed.
var devNull = sync.OnceValues(func() (*os.File, error) {
	fd, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: os.DevNull, Err: err}
	}
	return os.NewFile(uintptr(fd), os.DevNull), nil
})

// command builds the exec.Cmd. The run gets its own process group and no
// parent-death signal: if the supervisor dies, the run keeps its lock until
// its last process exits, as the contract requires.
func command(spec Spec) (*exec.Cmd, error) {
	if len(spec.Argv) == 0 {
		return nil, ErrNoCommand
	}
	if spec.Dir != "" {
		// Checked first so the message names the directory, not the command.
		if fi, err := os.Stat(spec.Dir); err != nil {
			return nil, fmt.Errorf("working directory: %w", err)
		} else if !fi.IsDir() {
			return nil, fmt.Errorf("working directory %s: %w", spec.Dir, unix.ENOTDIR)
		}
	}
	env := spec.Env
	if env == nil {
		env = os.Environ()
	}
	if spec.Tag != "" && !slices.Contains(env, spec.Tag) {
		env = append(slices.Clip(env), spec.Tag)
	}
	if spec.Heartbeat != nil {
		// Last: os/exec keeps the last of a name's values, so a job's env
		// cannot point its beats elsewhere.
		env = append(slices.Clip(env), EnvHeartbeatFD+"="+strconv.Itoa(HeartbeatFD))
	}
	path, err := lookPath(spec.Argv[0], spec.Dir, env)
	if err != nil {
		return nil, err
	}
	stdin, err := devNull()
	if err != nil {
		return nil, err
	}
	return &exec.Cmd{
		Path:        path,
		Args:        spec.Argv,
		Dir:         spec.Dir,
		Env:         env,
		Stdin:       stdin,
		ExtraFiles:  withSlots(spec.ExtraFiles, spec.SlotFiles),
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Credential: spec.Credential},
	}, nil
}

// withSlots is the run's ExtraFiles with slots from SlotFD on: fd 3 (the
// lock) and fd 4 (the heartbeat, set by addBeats) are kept free for their
// own, closed when the run has neither.
func withSlots(extra, slots []*os.File) []*os.File {
	if len(slots) == 0 {
		return extra
	}
	files := make([]*os.File, SlotFD-3, SlotFD-3+len(slots))
	copy(files, extra[:min(len(extra), HeartbeatFD-3)])
	return append(files, slots...)
}
