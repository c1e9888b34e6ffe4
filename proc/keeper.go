package proc

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// KeeperName is argv[0] of a keeper process. The executable is this one
// (/proc/self/exe), so its main must hand such an invocation to KeeperMain
// (see IsKeeper) before anything else.
const KeeperName = "cronvisor-keeper"

// IsKeeper reports whether args (os.Args) are those of a keeper process.
func IsKeeper(args []string) bool { return len(args) > 0 && args[0] == KeeperName }

// ErrGuardExited is reported (as Canceled) when the keeper of a run that
// must end with its supervisor (Keeper.Within) exited before the run did:
// the run is ended rather than left unguarded.
var ErrGuardExited = errors.New("proc: the run's keeper exited")

// Keeper asks for a keeper process beside the run: it outlives this
// process and, if this process dies first, guards the run in its place
// (see the package doc).
type Keeper struct {
	// EndAtOnce: the run must be gone within Within of the supervisor's
	// death (a lease nothing of the run holds): the keeper ends it at
	// once, SIGTERM and SIGKILL after min(Spec.KillGrace, Within/2).
	// Otherwise the run goes on to its end or its Deadline, as if its
	// supervisor lived.
	EndAtOnce bool
	Within    time.Duration
	// Session, if set, is the connection whose server session holds the
	// run's lock (an SQL session lock): the keeper holds it, so the lock
	// outlives the supervisor as long as the run does, and a session the
	// server ends (the connection readable or hung up once nothing else
	// uses it) ends the run at once, as a lost lock.
	Session *os.File
	// Handoff, if set, describes a lease the keeper keeps renewing once
	// the supervisor is dead (its KeeperMain's LeaseKeeper reads it): the
	// run goes on, and is ended within Within if the lease is lost.
	Handoff []byte
	// Deadline is when the keeper ends the run (SIGTERM, then SIGKILL
	// after Spec.KillGrace) if it is still going; zero: never.
	Deadline time.Time
	// Timeout names the deadline in the end's reason ("exceeded timeout 2s").
	Timeout time.Duration
	// End is where the keeper writes the run's End once the run is over,
	// if its supervisor died first (WriteEnd); empty: nowhere.
	End string
	// Log is the run's output file: once the supervisor is dead the
	// keeper reads the run's pipes and appends their lines to it
	// ("STREAM | TEXT"), so that the run never writes to a closed pipe.
	// Empty: the output is read and dropped.
	Log string
	// Run names the run in its End, so that the next supervisor can
	// record it even if nothing else of it was recorded.
	Run KeptRun
}

// KeptRun is what an End says of the run besides how it ended.
type KeptRun struct {
	Job     string    `json:"job"`
	Slot    time.Time `json:"slot,omitzero"`
	Attempt int       `json:"attempt,omitempty"`
	Manual  bool      `json:"manual,omitempty"`
	// Started, Host and SupervisorPID are the keeper's to fill in.
	Started       time.Time `json:"started_at,omitzero"`
	Host          string    `json:"host,omitempty"`
	SupervisorPID int       `json:"supervisor_pid,omitempty"`
	PID           int       `json:"pid,omitempty"`
}

// Guard is a Keeper that ends the run within Within of its supervisor's
// death: for locks nothing of the run holds, such as a Redis lease.
type Guard struct {
	Within time.Duration
}

// keeper is the Keeper the spec asks for, nil for none.
func (s Spec) keeper() *Keeper {
	if s.Keeper != nil {
		return s.Keeper
	}
	if s.Guard != nil {
		return &Keeper{EndAtOnce: true, Within: s.Guard.Within}
	}
	return nil
}

// Urgent is a cancellation cause (context.CancelCauseFunc) for a run that
// must be gone within Within, its lock about to expire (a lost lease): it
// is ended as its keeper would end it, SIGKILL after min(Spec.KillGrace,
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

// keeperExe works even once the binary was replaced or deleted (an
// upgrade in place): it names this process's own executable.
const keeperExe = "/proc/self/exe"

// keeper is the supervisor's side of a running keeper process.
type keeper struct {
	cmd    *exec.Cmd
	sock   *os.File      // the tether: only this process holds this end
	gone   chan struct{} // closed once the keeper has exited and been reaped
	ending bool          // Within > 0: its exit ends the run
}

// keeperFiles are the keeper's descriptors from fd 3 on: the tether, then
// the run's lock (or nothing), then the read ends of the run's pipes.
const (
	fdTether = 3 + iota
	fdLock
	fdStdout
	fdStderr
	fdSession
)

// startKeeper starts the keeper of a run before the run itself, so that no
// instant of the run is unguarded. Its tether is a socket pair: the
// supervisor sends "pid N" with the run's pidfd once the run started (see
// watch); end of file means the supervisor died. The keeper holds copies
// of the pipes' read ends, which it leaves alone while the supervisor
// lives, and of the lock, which it lets go only once the run's end is
// written.
func startKeeper(k Keeper, spec Spec, out *output, leaf string) (*keeper, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socketpair", err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "tether"), os.NewFile(uintptr(fds[1]), "tether")
	defer theirs.Close()
	stdin, err := devNull()
	if err != nil {
		mine.Close()
		return nil, err
	}
	lockFile := stdin // fd 4 is /dev/null without a lock
	if len(spec.ExtraFiles) > 0 && spec.ExtraFiles[0] != nil {
		lockFile = spec.ExtraFiles[0]
	}
	cmd := &exec.Cmd{
		Path: keeperExe,
		// Flags, not positional words: a test binary without IsKeeper in
		// its TestMain refuses them and exits, rather than run its tests.
		Args:       keeperArgs(k, spec, leaf),
		Stdin:      stdin,
		ExtraFiles: keeperFiles(theirs, lockFile, out, k.Session, stdin),
		// Its own group, outside the run's and the supervisor's: a kill
		// of the supervisor's group leaves it to do its work. Its
		// environment is the supervisor's, which never holds the run's
		// tag, so it is not taken for a process of the run.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := startChild(cmd, false); err != nil {
		mine.Close()
		return nil, err
	}
	kp := &keeper{cmd: cmd, sock: mine, gone: make(chan struct{}), ending: k.EndAtOnce}
	if k.Handoff != nil {
		// Before the run starts: a supervisor dead right after has
		// handed it over already.
		msg := "lease " + base64.StdEncoding.EncodeToString(k.Handoff) + "\n"
		_ = unix.Sendmsg(int(mine.Fd()), []byte(msg), nil, nil, 0)
	}
	go func() {
		_ = cmd.Wait()
		unregister(cmd.Process.Pid)
		close(kp.gone)
	}()
	return kp, nil
}

func keeperFiles(tether, lockFile *os.File, out *output, session, null *os.File) []*os.File {
	if session == nil {
		session = null
	}
	return []*os.File{tether, lockFile, out.stdoutR, out.stderrR, session}
}

func keeperArgs(k Keeper, spec Spec, leaf string) []string {
	grace := spec.KillGrace
	if k.EndAtOnce {
		grace = guardGrace(grace, k.Within)
	}
	args := []string{KeeperName, "-tag", spec.Tag, "-grace", grace.String(), "-supervisor", strconv.Itoa(os.Getpid())}
	if k.EndAtOnce {
		args = append(args, "-at-once")
	}
	if k.Session != nil {
		args = append(args, "-session")
	}
	if k.Handoff != nil {
		args = append(args, "-lease", "-within", k.Within.String())
	}
	if !k.Deadline.IsZero() {
		args = append(args, "-deadline", k.Deadline.Format(time.RFC3339Nano), "-timeout", k.Timeout.String())
	}
	if k.End != "" {
		args = append(args, "-end", k.End)
	}
	if r := k.Run; r.Job != "" {
		args = append(args, "-job", r.Job, "-slot", r.Slot.Format(time.RFC3339Nano), "-attempt", strconv.Itoa(r.Attempt))
		if r.Manual {
			args = append(args, "-manual")
		}
	}
	if k.Log != "" {
		args = append(args, "-log", k.Log)
	}
	if len(spec.ExtraFiles) > 0 && spec.ExtraFiles[0] != nil {
		args = append(args, "-lock")
	}
	if leaf != "" {
		args = append(args, "-cgroup", leaf)
	}
	return args
}

// pid is the keeper's pid, 0 without one.
func (k *keeper) pid() int {
	if k == nil {
		return 0
	}
	return k.cmd.Process.Pid
}

// watch tells the keeper the run's main pid, with a pidfd of it that the
// keeper keeps: it reads the run's exit status through it whoever reaps
// the run. A failed send means the keeper is gone, which Run learns from
// lost.
func (k *keeper) watch(pid int, started time.Time) {
	if k == nil {
		return
	}
	fd, err := unix.PidfdOpen(pid, 0)
	var rights []byte
	if err == nil {
		defer unix.Close(fd)
		rights = unix.UnixRights(fd)
	}
	msg := "pid " + strconv.Itoa(pid) + " " + strconv.FormatInt(started.UnixNano(), 10) + "\n"
	_ = unix.Sendmsg(int(k.sock.Fd()), []byte(msg), rights, nil, 0)
}

// lost is closed if a keeper whose exit ends the run exits while the run
// goes on; nil otherwise.
func (k *keeper) lost() <-chan struct{} {
	if k == nil || !k.ending {
		return nil
	}
	return k.gone
}

// exitErr says how the keeper ended.
func (k *keeper) exitErr() error {
	return fmt.Errorf("%w (%v)", ErrGuardExited, k.cmd.ProcessState)
}

// exitedAt is when the keeper saw the run's main process exit, if it has
// told so already: the process's own end even when this process was
// frozen or starved when it happened. Zero if not told.
func (k *keeper) exitedAt() time.Time {
	if k == nil {
		return time.Time{}
	}
	buf := make([]byte, 128)
	n, _, _, _, err := unix.Recvmsg(int(k.sock.Fd()), buf, nil, unix.MSG_DONTWAIT)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return parseExited(string(buf[:n]))
}

// detach hands the run over to the keeper: the tether's end, as if this
// process had died. The keeper stays this process's child until it exits.
func (k *keeper) detach() { k.sock.Close() }

// stop ends the keeper once the run is over. SIGKILL, not a message: it
// has nothing to clean up, and is gone at once and for sure, never left
// to act on the tether's end later.
func (k *keeper) stop() {
	if k == nil {
		return
	}
	_ = k.cmd.Process.Kill() // not reaped yet, so the pid is still its own
	<-k.gone
	k.sock.Close()
}
