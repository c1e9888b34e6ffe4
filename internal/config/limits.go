package config

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
	"gopkg.in/yaml.v3"

	"cronvisor/internal/base/statedir"
)

// What execve(2) accepts, as fs/exec.c counts it: every argument and
// environment string with its NUL terminator, each at most maxArgStrlen
// (MAX_ARG_STRLEN, 32 pages), and all of them with a pointer each within
// a quarter of the stack limit, capped at 6 MiB (3/4 of _STK_LIM) and
// never below 128 KiB (ARG_MAX). Past these the exec fails with E2BIG and
// every run of the job fails to start; validate says so up front.
const (
	maxArgStrlen = 32 * 4096
	stackArgCap  = 6 << 20
	minArgSpace  = 32 * 4096
	ptrSize      = 8
	// cronvisorEnvReserve is room for the CRONVISOR_* variables each run
	// gets (a job name is at most maxNameLen bytes).
	cronvisorEnvReserve = 1024
)

// argSpace is how many bytes of arguments and environment a program
// started by this process may get.
func argSpace() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_STACK, &rl); err != nil {
		return minArgSpace
	}
	space := uint64(stackArgCap)
	if rl.Cur != unix.RLIM_INFINITY {
		space = min(space, rl.Cur/4)
	}
	return int(max(space, minArgSpace))
}

// environSize is what the supervisor's own environment, which every job
// inherits, takes of the argument space.
func environSize() int {
	n := 0
	for _, kv := range os.Environ() {
		n += len(kv) + 1 + ptrSize
	}
	return n
}

// hasNUL reports whether s holds a NUL byte, which ends a C string: no
// argument, environment variable or file name can carry one.
func hasNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }

// argument checks one argument of a command.
func (d *decoder) argument(n *yaml.Node, s string) bool {
	switch {
	case hasNUL(s):
		d.errorf(n, "command: an argument contains a NUL byte (\\0), which no program can receive")
		return false
	case len(s)+1 > maxArgStrlen:
		d.errorf(n, "command: an argument of %s is over the kernel's limit of %s per argument (MAX_ARG_STRLEN); runs could not start",
			kib(len(s)+1), kib(maxArgStrlen))
		return false
	}
	return true
}

// envValue checks one environment variable of a job.
func (d *decoder) envValue(e entry, v *yaml.Node) bool {
	switch size := len(e.name) + 1 + len(v.Value) + 1; {
	case hasNUL(v.Value):
		d.errorf(e.val, "env %s: the value contains a NUL byte (\\0), which no environment variable can hold", e.name)
		return false
	case size > maxArgStrlen:
		d.errorf(e.val, "env %s: the variable is %s, over the kernel's limit of %s per variable (MAX_ARG_STRLEN); runs could not start",
			e.name, kib(size), kib(maxArgStrlen))
		return false
	}
	return true
}

// argTotal checks that j's command and environment, on top of the
// supervisor's own, fit in what execve accepts. Variables the job sets
// over inherited ones are counted twice: an overestimate by their size.
func (d *decoder) argTotal(j *Job, src *JobSource) {
	if len(j.Command) == 0 || d.reading {
		// A reader's environment is not the one the jobs will inherit.
		return
	}
	need := d.environ + cronvisorEnvReserve + len(j.Command[0]) + 1 // execve copies the path too
	for _, a := range j.Command {
		need += len(a) + 1 + ptrSize
	}
	for k, v := range j.Env {
		need += len(k) + 1 + len(v) + 1 + ptrSize
	}
	if need <= d.argSpace {
		return
	}
	at := src.At("env")
	if j.Env == nil {
		at = src.At("command")
	}
	d.report(at, false, "job %q: its command and environment (with the supervisor's) take %s, over the %s the kernel allows a program (a quarter of ulimit -s, at most 6 MiB); runs could not start",
		j.Name, kib(need), kib(d.argSpace))
}

// kib formats a byte count for the messages above.
func kib(n int) string {
	if n >= 10<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", (n+1023)>>10)
}

// stateDir checks that the state dir, and the directories cronvisor makes
// in it, are not files: every run would fail to take its lock. A path that
// does not exist yet is made at start-up; one this user cannot look at is
// left to the supervisor, which may run as another user. at is where
// state_dir was written, zero for the default.
func (d *decoder) stateDir(dir string, at Pos) {
	what := "state_dir"
	if at == (Pos{}) {
		at, what = Pos{1, 1}, "the default state_dir"
	}
	for _, p := range []string{dir, statedir.Dir(dir).Locks(), statedir.Dir(dir).Logs()} {
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, unix.ENOTDIR):
			d.report(at, false, "%s: %s is not a directory: a part of the path is a file", what, p)
		case err == nil && !fi.IsDir():
			d.report(at, false, "%s: %s is a file, not a directory", what, p)
		default:
			continue
		}
		return
	}
}
