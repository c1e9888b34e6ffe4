package proc

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// SetupName is argv[0] of a run's exec shim: this executable re-executed
// (/proc/self/exe) as the run's first process, which applies Spec.Setup to
// itself and then execs the job in the same process. Its main must hand
// such an invocation to SetupMain (see IsSetup) before anything else.
const SetupName = "cronvisor-setup"

// IsSetup reports whether args (os.Args) are those of an exec shim.
func IsSetup(args []string) bool { return len(args) > 0 && args[0] == SetupName }

// Setup is what a run's first process gets before it execs the job, and
// everything the job forks inherits: its nice value, I/O priority,
// oom_score_adj and resource limits. A nice value and an I/O priority
// alone are given to the thread that forks the run (startOnThread). Go's
// os/exec runs no code between fork and exec, so a run with any other
// Setup is started stopped at its exec and given it then (startTraced),
// or, where this process may not trace it, started as the exec shim (see
// SetupName), which applies it and execs the job's argv with the job's
// environment, unchanged, in the same process: the pid, process group,
// pidfd and the keeper's view are the run's from the start. A run without
// a Setup is started directly, as before, and pays nothing.
type Setup struct {
	Nice        *int    // setpriority(PRIO_PROCESS): -20..19
	IOPrio      *IOPrio // ioprio_set(IOPRIO_WHO_PROCESS)
	OOMScoreAdj *int    // /proc/self/oom_score_adj: -1000..1000
	// Rlimits are set soft and hard alike. An RLIMIT_NOFILE of
	// RLIM_INFINITY, which the kernel refuses, becomes fs.nr_open.
	Rlimits []Rlimit
	// viaShim starts the run through the exec shim even where it could
	// be started traced: the tests and benchmarks of the shim.
	viaShim bool
}

// IOPrio is an I/O scheduling class and its level (0..7, 0 the highest;
// the idle class has none).
type IOPrio struct{ Class, Level int }

// The I/O scheduling classes of ioprio_set(2).
const (
	IOPrioRealtime   = 1
	IOPrioBestEffort = 2
	IOPrioIdle       = 3
)

// Rlimit is one resource limit (unix.RLIMIT_*), soft and hard.
type Rlimit struct {
	Resource int
	Value    uint64
}

// onThread reports whether all of s is what a forked process inherits
// from the thread that forks it: a nice value and an I/O priority,
// which Linux keeps per thread. Such a run needs no shim (startOnThread),
// whose start costs this whole executable's.
func (s *Setup) onThread() bool {
	return s != nil && s.OOMScoreAdj == nil && len(s.Rlimits) == 0
}

// traced reports whether s is applied to the run's process stopped at its
// exec (see startTraced): it holds more than a thread passes on, and this
// process may trace what it starts.
func (s *Setup) traced() bool {
	return s != nil && !s.onThread() && !s.viaShim && traceUsable()
}

// startOnThread calls start on a thread locked to it that s's nice value
// and I/O priority were given first, so that the process start forks
// has them from its first instruction, before its exec and any change of
// user, then gives the thread its own back. While it is locked, the
// runtime starts no thread from it (they would inherit them). A thread
// whose priorities cannot be given back (raising a priority again takes
// CAP_SYS_NICE) is not handed back to the runtime: its goroutine ends
// locked to it, which ends the thread.
func startOnThread(s *Setup, start func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		tid := unix.Gettid()
		saved, err := threadPriorities(tid)
		if err == nil {
			err = applyPriorities(s, tid)
		}
		if err != nil {
			errc <- err
			return // locked: the thread may be half changed
		}
		errc <- start()
		if applyPriorities(saved, tid) == nil {
			runtime.UnlockOSThread()
		}
	}()
	return <-errc
}

// threadPriorities reads thread tid's nice value and I/O priority.
func threadPriorities(tid int) (*Setup, error) {
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return nil, fmt.Errorf("getpriority: %w", err)
	}
	io, _, e := unix.RawSyscall(unix.SYS_IOPRIO_GET, ioprioWhoProcess, uintptr(tid), 0)
	if e != 0 {
		return nil, fmt.Errorf("ioprio_get: %w", e)
	}
	nice := 20 - prio // the raw system call's value
	class, level := int(io)>>ioprioClassShift, int(io)&(1<<ioprioClassShift-1)
	if class == 0 { // none: best-effort at a level derived from nice, which ioprio_set takes back as 0
		return &Setup{Nice: &nice, IOPrio: &IOPrio{0, 0}}, nil
	}
	return &Setup{Nice: &nice, IOPrio: &IOPrio{class, level}}, nil
}

// shimArgs is the shim's command line: its settings as flags (a test
// binary without IsSetup in its TestMain refuses them and exits), then
// "--", the path to exec and the job's argv.
func shimArgs(s *Setup, cred *syscall.Credential, dir string, status int, path string, argv []string) []string {
	args := []string{SetupName, "-status", strconv.Itoa(status)}
	if s.Nice != nil {
		args = append(args, "-nice", strconv.Itoa(*s.Nice))
	}
	if p := s.IOPrio; p != nil {
		args = append(args, "-ioprio", fmt.Sprintf("%d:%d", p.Class, p.Level))
	}
	if s.OOMScoreAdj != nil {
		args = append(args, "-oom", strconv.Itoa(*s.OOMScoreAdj))
	}
	for _, r := range s.Rlimits {
		args = append(args, "-rlimit", fmt.Sprintf("%d=%d", r.Resource, r.Value))
	}
	if cred != nil {
		groups := make([]string, len(cred.Groups))
		for i, g := range cred.Groups {
			groups[i] = strconv.FormatUint(uint64(g), 10)
		}
		args = append(args, "-uid", strconv.FormatUint(uint64(cred.Uid), 10),
			"-gid", strconv.FormatUint(uint64(cred.Gid), 10), "-groups", strings.Join(groups, ","))
		if cred.NoSetGroups {
			args = append(args, "-keep-groups")
		}
	}
	if dir != "" {
		args = append(args, "-dir", dir)
	}
	args = append(args, "--", path)
	return append(args, argv...)
}

// setupStart is the supervisor's side of a shim being started: the read
// end of its status pipe, which reaches end of file when the shim's exec
// of the job succeeds (the write end is close-on-exec in the shim) and
// otherwise carries why it failed.
type setupStart struct {
	r, w *os.File
}

// shim turns cmd, built to exec the job, into the command of its exec
// shim. The credential and working directory move to the shim, which
// applies them after Setup: a run as another user still gets a nice
// value or oom_score_adj only root may set. nil when s is nil.
func shim(cmd *exec.Cmd, s *Setup) (*setupStart, error) {
	if s == nil || s.onThread() {
		return nil, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	var cred *syscall.Credential
	if cmd.SysProcAttr != nil {
		cred, cmd.SysProcAttr.Credential = cmd.SysProcAttr.Credential, nil
	}
	status := 3 + len(cmd.ExtraFiles)
	cmd.Args = shimArgs(s, cred, cmd.Dir, status, cmd.Path, cmd.Args)
	cmd.Path, cmd.Dir = keeperExe, ""
	cmd.ExtraFiles = append(cmd.ExtraFiles[:len(cmd.ExtraFiles):len(cmd.ExtraFiles)], w)
	return &setupStart{r: r, w: w}, nil
}

// started waits until the shim has exec'd the job, or failed to: then it
// reaps the shim and returns why. Call it after cmd.Start, whether or not
// that succeeded (startErr).
func (s *setupStart) started(cmd *exec.Cmd, startErr error) error {
	if s == nil {
		return startErr
	}
	s.w.Close()
	defer s.r.Close()
	if startErr != nil {
		return startErr
	}
	msg, _ := io.ReadAll(io.LimitReader(s.r, 4096))
	if len(msg) == 0 {
		return nil // end of file: the exec closed the write end
	}
	_ = cmd.Wait()
	unregister(cmd.Process.Pid)
	code, text, _ := strings.Cut(string(msg), " ")
	n, _ := strconv.Atoi(code)
	return fmt.Errorf("%s: %w", text, syscall.Errno(n))
}

// abort closes the status pipe of a shim that will not be started.
func (s *setupStart) abort() {
	if s != nil {
		s.r.Close()
		s.w.Close()
	}
}

// setupFlags are the shim's arguments (see shimArgs).
type setupFlags struct {
	status     int
	setup      Setup
	ioprio     string
	cred       *syscall.Credential
	dir        string
	path       string
	argv       []string
	nice, oom  optInt
	uid, gid   optInt
	groups     string
	keepGroups bool
}

// optInt is an integer flag that tells whether it was given.
type optInt struct {
	v   int
	set bool
}

func (o *optInt) String() string { return strconv.Itoa(o.v) }

func (o *optInt) Set(s string) (err error) {
	o.v, err = strconv.Atoi(s)
	o.set = err == nil
	return err
}

func parseSetupFlags(args []string) (setupFlags, error) {
	var f setupFlags
	fs := flag.NewFlagSet(SetupName, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&f.status, "status", -1, "the status pipe's descriptor")
	fs.Var(&f.nice, "nice", "nice value")
	fs.StringVar(&f.ioprio, "ioprio", "", "CLASS:LEVEL")
	fs.Var(&f.oom, "oom", "oom_score_adj")
	fs.Func("rlimit", "RESOURCE=VALUE", f.addRlimit)
	fs.Var(&f.uid, "uid", "user id")
	fs.Var(&f.gid, "gid", "group id")
	fs.StringVar(&f.groups, "groups", "", "supplementary group ids, comma-separated")
	fs.BoolVar(&f.keepGroups, "keep-groups", false, "leave the supplementary groups alone")
	fs.StringVar(&f.dir, "dir", "", "working directory")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() < 2 {
		return f, errors.New("no command after --")
	}
	f.path, f.argv = fs.Arg(0), fs.Args()[1:]
	return f, f.finish()
}

func (f *setupFlags) addRlimit(s string) error {
	res, val, _ := strings.Cut(s, "=")
	r, err1 := strconv.Atoi(res)
	v, err2 := strconv.ParseUint(val, 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	f.setup.Rlimits = append(f.setup.Rlimits, Rlimit{r, v})
	return nil
}

// finish turns the parsed flags into the Setup and credential.
func (f *setupFlags) finish() error {
	if f.nice.set {
		f.setup.Nice = &f.nice.v
	}
	if f.oom.set {
		f.setup.OOMScoreAdj = &f.oom.v
	}
	if f.ioprio != "" {
		c, l, _ := strings.Cut(f.ioprio, ":")
		class, err1 := strconv.Atoi(c)
		level, err2 := strconv.Atoi(l)
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		f.setup.IOPrio = &IOPrio{class, level}
	}
	if !f.uid.set {
		return nil
	}
	f.cred = &syscall.Credential{Uid: uint32(f.uid.v), Gid: uint32(f.gid.v), NoSetGroups: f.keepGroups}
	for _, g := range strings.Split(f.groups, ",") {
		if g == "" {
			continue
		}
		id, err := strconv.ParseUint(g, 10, 32)
		if err != nil {
			return err
		}
		f.cred.Groups = append(f.cred.Groups, uint32(id))
	}
	return nil
}
