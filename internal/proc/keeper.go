package proc

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
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
	// NoSync writes the End without syncing it (durability: process).
	NoSync bool
	// Log is the run's output file: once the supervisor is dead the
	// keeper reads the run's pipes and appends their lines to it
	// ("STREAM | TEXT"), so that the run never writes to a closed pipe.
	// Empty: the output is read and dropped.
	Log string
	// LogLimit is the run's log_limit: the keeper keeps the log within
	// it as the supervisor did (head, tail, a marked cut); 0: all of it.
	LogLimit int64
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

// keeper is the supervisor's side of a run's keeper.
type keeper struct {
	proc     *keeperProc  // the keeper process that keeps the run
	sock     *os.File     // the tether: only this process holds this end; nil if deferred
	deferred *deferredRun // nil: handed over eagerly
	ending   bool         // Within > 0: its exit ends the run
	guard    *guardSlot   // the run's guard file, nil for none
}

// startKeeper hands the run to a keeper before the run starts, so that
// no instant of the run is unguarded: deferred where it can be (see
// keeperdefer.go), else eagerly. The keeper's copies are of the pipes'
// read ends, which it leaves alone while the supervisor lives, of the
// lock, which it lets go only once the run's end is written, and of the
// heartbeat pipe and the SQL session.
func startKeeper(k Keeper, spec Spec, out *output, leaf string) (*keeper, error) {
	handed := []*os.File{out.stdoutR, out.stderrR}
	if len(spec.ExtraFiles) > 0 && spec.ExtraFiles[0] != nil {
		handed = append(handed, spec.ExtraFiles[0])
	}
	if k.Session != nil {
		handed = append(handed, k.Session)
	}
	if out.beatR != nil {
		handed = append(handed, out.beatR)
	}
	defer runtime.KeepAlive(handed) // open until handed over
	pool := spec.Keepers
	if pool == nil {
		pool = processKeepers
	}
	args := keeperArgs(k, spec, leaf)
	guard := writeGuard(k.End, args, k.Handoff)
	if k.Session == nil && k.Handoff == nil && !k.EndAtOnce {
		if kp, r := pool.handDeferred(endsDir(k.End), args, handed); r != nil {
			return &keeper{proc: kp, guard: guard, deferred: r}, nil
		}
	}
	kept, err := startEager(k, pool, args, handed)
	if err != nil {
		guard.release()
		return nil, err
	}
	kept.guard = guard
	return kept, nil
}

// startEager hands the run over on the control socket, with a tether (a
// socket pair; its messages are in keeperproto.go): the supervisor sends
// "pid N" with the run's pidfd once the run started (see watch) and
// "stop" once it is over; end of file without "stop" means the
// supervisor died.
func startEager(k Keeper, pool *Keepers, args []string, handed []*os.File) (*keeper, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socketpair", err)
	}
	defer unix.Close(fds[1]) // the keeper has its own copy once handed
	// This end is read through the runtime's poller, so that waiting for
	// the keeper to let go (stop) holds no thread; the keeper's end
	// stays blocking.
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		return nil, os.NewSyscallError("fcntl", err)
	}
	mine := os.NewFile(uintptr(fds[0]), "tether")
	files, err := descriptors(fds[1], handed)
	if err != nil {
		mine.Close()
		return nil, err
	}
	kp, err := pool.hand(endsDir(k.End), args, files)
	if err != nil {
		mine.Close()
		return nil, err
	}
	if k.Handoff != nil {
		// Before the run starts: a supervisor dead right after has
		// handed it over already.
		_, _ = mine.Write([]byte(leaseLine(k.Handoff)))
	}
	return &keeper{proc: kp, sock: mine, ending: k.EndAtOnce}, nil
}

// descriptors is first and the descriptors of files, read without
// (*os.File).Fd, which takes a file out of the runtime's poller for good:
// every read of the run's output would then hold a thread, and its
// deadlines (the drain after a run's end) would no longer work. The
// numbers are valid while the files are open.
func descriptors(first int, files []*os.File) ([]int, error) {
	out := append(make([]int, 0, len(files)+1), first)
	for _, f := range files {
		rc, err := f.SyscallConn()
		if err != nil {
			return nil, err
		}
		if err := rc.Control(func(fd uintptr) { out = append(out, int(fd)) }); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func keeperArgs(k Keeper, spec Spec, leaf string) []string {
	grace := spec.KillGrace
	if k.EndAtOnce {
		grace = guardGrace(grace, k.Within)
	}
	args := []string{KeeperName, "-tag", spec.Tag, "-grace", grace.String(), "-supervisor", strconv.Itoa(procfs.Self())}
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
	if k.NoSync {
		args = append(args, "-no-sync")
	}
	if r := k.Run; r.Job != "" {
		args = append(args, "-job", r.Job, "-slot", r.Slot.Format(time.RFC3339Nano), "-attempt", strconv.Itoa(r.Attempt))
		if r.Manual {
			args = append(args, "-manual")
		}
	}
	if k.Log != "" {
		args = append(args, "-log", k.Log)
		if k.LogLimit > 0 {
			args = append(args, "-log-limit", strconv.FormatInt(k.LogLimit, 10))
		}
	}
	if len(spec.ExtraFiles) > 0 && spec.ExtraFiles[0] != nil {
		args = append(args, "-lock")
	}
	if leaf != "" {
		args = append(args, "-cgroup", leaf)
	}
	if hb := spec.Heartbeat; hb != nil {
		args = append(args, "-beats")
		if hb.Timeout > 0 {
			args = append(args, "-heartbeat-timeout", hb.Timeout.String())
		}
	}
	return args
}

// pid is the keeper's pid, 0 without one.
func (k *keeper) pid() int {
	if k == nil {
		return 0
	}
	return k.proc.cmd.Process.Pid
}

// watch tells the keeper the run's main pid, with a pidfd of it that the
// keeper keeps: it reads the run's exit status through it whoever reaps
// the run. A failed send means the keeper is gone, which Run learns from
// lost.
func (k *keeper) watch(pid int, started time.Time) {
	if k == nil {
		return
	}
	if k.deferred != nil {
		k.deferred.watch(pid, started)
		return
	}
	fd, err := unix.PidfdOpen(pid, 0)
	var rights []byte
	if err == nil {
		defer unix.Close(fd)
		rights = unix.UnixRights(fd)
	}
	msg := pidLine(pid, started)
	rc, err := k.sock.SyscallConn()
	if err != nil {
		return
	}
	// A full socket (a keeper slow to read) waits in the poller: the
	// message is never dropped.
	_ = rc.Write(func(fd uintptr) bool {
		err := unix.Sendmsg(int(fd), []byte(msg), rights, nil, unix.MSG_NOSIGNAL)
		return err != unix.EAGAIN && err != unix.EINTR
	})
}

// lost is closed if a keeper whose exit ends the run exits while the run
// goes on; nil otherwise.
func (k *keeper) lost() <-chan struct{} {
	if k == nil || !k.ending {
		return nil
	}
	return k.proc.gone
}

// exitErr says how the keeper ended.
func (k *keeper) exitErr() error {
	return fmt.Errorf("%w (%w: %v)", ErrGuardExited, errKeeperGone, k.proc.cmd.ProcessState)
}

// exitedAt is when the keeper saw the run's main process exit, if it has
// told so already: the process's own end even when this process was
// frozen or starved when it happened. Zero if not told.
func (k *keeper) exitedAt() time.Time {
	if k == nil {
		return time.Time{}
	}
	if k.deferred != nil {
		return k.deferred.exitedAt()
	}
	buf := make([]byte, 128)
	rc, err := k.sock.SyscallConn()
	if err != nil {
		return time.Time{}
	}
	var n int
	_ = rc.Control(func(fd uintptr) { n, _, err = recvmsgNow(int(fd), buf, nil, 0) })
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return parseExited(string(buf[:n]))
}

// detach hands the run over to the keeper: the tether's end, as if this
// process had died. The keeper stays this process's child until it exits.
func (k *keeper) detach() {
	if r := k.deferred; r != nil {
		// The packet stays in the tether for the keeper, asked to
		// sweep now rather than at its next run.
		r.close()
		k.proc.askSweep()
		return
	}
	k.sock.Close()
}

// stopWait bounds how long stop waits for a keeper to let go of a run:
// one that does not answer (frozen, or starved) is killed, as the only
// sure way to close its copy of the run's lock.
const stopWait = 5 * time.Second

// stop tells the keeper the run is over, and waits until it let go of
// its copies of the run's descriptors (it closes its end of the tether
// last): the lock is then free as soon as this process closes its own.
func (k *keeper) stop() {
	if k == nil {
		return
	}
	defer k.proc.kept.Add(-1)
	k.guard.release() // the run is over: nothing of it is left to guard
	if r := k.deferred; r != nil {
		r.stop(k.proc.kill)
		return
	}
	defer k.sock.Close()
	if _, err := k.sock.Write([]byte(stopLine)); err != nil {
		return // the keeper's end is closed: it holds nothing of the run
	}
	if !awaitHangUp(k.sock, stopWait) {
		k.proc.kill()
	}
}

// awaitHangUp reads f until its end of file, for at most d; false if
// it did not come.
func awaitHangUp(f *os.File, d time.Duration) bool {
	if f.SetReadDeadline(time.Now().Add(d)) != nil {
		return false
	}
	buf := make([]byte, 256)
	for {
		if _, err := f.Read(buf); err != nil {
			// End of file, or the socket's error: the keeper let go.
			return !errors.Is(err, os.ErrDeadlineExceeded)
		}
	}
}
