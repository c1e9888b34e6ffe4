package proc

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// GuardName is argv[0] of a guard process. The executable is this one
// (/proc/self/exe), so its main must hand such an invocation to GuardMain
// (see IsGuard) before anything else.
const GuardName = "cronvisor-guard"

// IsGuard reports whether args (os.Args) are those of a guard process.
func IsGuard(args []string) bool { return len(args) > 0 && args[0] == GuardName }

// ErrGuardExited is reported (as Canceled) when a run's guard exited
// before the run did: the run is ended rather than left unguarded.
var ErrGuardExited = errors.New("proc: the run's guard exited")

// Guard asks for a run to be ended if its supervisor dies first; see
// Spec.Guard and the package doc.
type Guard struct {
	// Within is how long after the supervisor's death the run must be
	// gone. The guard sends SIGTERM at once and SIGKILL after
	// min(Spec.KillGrace, Within/2), leaving the other half for SIGKILL
	// to take effect.
	Within time.Duration
}

// Urgent is a cancellation cause (context.CancelCauseFunc) for a run that
// must be gone within Within, its lock about to expire (a lost lease): it
// is ended as its guard would end it, SIGKILL after min(Spec.KillGrace,
// Within/2). It reads and matches (errors.Is) as Err.
type Urgent struct {
	Err    error
	Within time.Duration
}

func (u *Urgent) Error() string { return u.Err.Error() }

// Unwrap returns Err.
func (u *Urgent) Unwrap() error { return u.Err }

// guardGrace is the grace of a run that must be gone within d: half of
// it, the other half for SIGKILL to take effect.
func guardGrace(killGrace, d time.Duration) time.Duration { return min(killGrace, d/2) }

// endGrace is the grace for ending a run whose end was caused by cause.
func endGrace(killGrace time.Duration, cause error) time.Duration {
	var u *Urgent
	if errors.As(cause, &u) {
		return guardGrace(killGrace, u.Within)
	}
	return killGrace
}

// guardExe works even once the binary was replaced or deleted (an upgrade
// in place): it names this process's own executable.
const guardExe = "/proc/self/exe"

// guard is the supervisor's side of a running guard process.
type guard struct {
	cmd  *exec.Cmd
	w    *os.File      // the tether's write end: only this process holds it
	gone chan struct{} // closed once the guard has exited and been reaped
}

// startGuard starts the guard of a run tagged tag, before the run itself,
// so that no instant of the run is unguarded. The guard reads the tether
// (a pipe on its fd 3): "pgid N" once the run started. Its end of file
// means the supervisor died: the supervisor never closes it while the
// guard lives (stop kills the guard first).
func startGuard(g Guard, tag string, grace time.Duration) (*guard, error) {
	r, w, err := os.Pipe() // O_CLOEXEC: no run inherits the write end
	if err != nil {
		return nil, err
	}
	defer r.Close()
	stdin, err := devNull()
	if err != nil {
		w.Close()
		return nil, err
	}
	cmd := &exec.Cmd{
		Path: guardExe,
		// Flags, not positional words: a test binary without IsGuard in
		// its TestMain refuses them and exits, rather than run its tests.
		Args:       []string{GuardName, "-tag", tag, "-grace", guardGrace(grace, g.Within).String()},
		Stdin:      stdin,
		ExtraFiles: []*os.File{r},
		// Its own group, outside the run's and the supervisor's: a kill
		// of the supervisor's group leaves it to do its work. Its
		// environment is the supervisor's, which never holds the run's
		// tag, so it is not taken for a process of the run.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := startChild(cmd, false); err != nil {
		w.Close()
		return nil, err
	}
	gd := &guard{cmd: cmd, w: w, gone: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		unregister(cmd.Process.Pid)
		close(gd.gone)
	}()
	return gd, nil
}

// watch tells the guard the run's process group. A failed write means the
// guard is gone, which Run learns from lost.
func (g *guard) watch(pgid int) {
	if g != nil {
		_, _ = fmt.Fprintf(g.w, "pgid %d\n", pgid)
	}
}

// lost is closed if the guard exits while the run goes on; nil without a
// guard.
func (g *guard) lost() <-chan struct{} {
	if g == nil {
		return nil
	}
	return g.gone
}

// exitErr says how the guard ended.
func (g *guard) exitErr() error {
	return fmt.Errorf("%w (%v)", ErrGuardExited, g.cmd.ProcessState)
}

// stop ends the guard once the run is over. SIGKILL, not a message: it
// has nothing to clean up, and is gone at once and for sure, never left
// to act on the tether's end later.
func (g *guard) stop() {
	if g == nil {
		return
	}
	_ = g.cmd.Process.Kill() // not reaped yet, so the pid is still its own
	<-g.gone
	g.w.Close()
}

// GuardMain is the body of a guard process, given its arguments after
// argv[0]; it returns the exit code. It reads the tether (fd 3) to its
// end, the supervisor's death, and then ends the run as Run would at a
// deadline: every process of the group or carrying the tag gets SIGTERM,
// SIGKILL after the grace.
func GuardMain(args []string) int {
	fs := flag.NewFlagSet(GuardName, flag.ContinueOnError)
	tag := fs.String("tag", "", "the run's KEY=VALUE environment tag")
	grace := fs.Duration("grace", 0, "delay between SIGTERM and SIGKILL")
	fs.SetOutput(io.Discard) // a guard has no stderr; the supervisor sees the exit
	if fs.Parse(args) != nil || fs.NArg() > 0 {
		return 2
	}
	// Its lifetime is the run's, told by the tether: a terminal's or a
	// service manager's signals for the supervisor are not for it.
	signal.Ignore(unix.SIGINT, unix.SIGTERM, unix.SIGHUP)
	t := &tree{self: os.Getpid(), pgid: readTether(os.NewFile(3, "tether"))}
	if *tag != "" {
		t.tag = []byte(*tag)
	}
	reaped := make(chan struct{}) // the main process is not ours to reap
	close(reaped)
	if err := t.end(reaped, *grace); err != nil {
		return 1
	}
	return 0
}

// readTether reads the tether to its end and returns the run's process
// group: -1, which matches no process, if it was never told (the
// supervisor died before the run started, or while starting it: the tag
// still finds the run then).
func readTether(f *os.File) int {
	pgid := -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		word, arg, _ := strings.Cut(sc.Text(), " ")
		if n, err := strconv.Atoi(arg); word == "pgid" && err == nil && n > 0 {
			pgid = n
		}
	}
	return pgid
}
