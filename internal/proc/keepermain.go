package proc

import (
	"context"
	"flag"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/exepages"
)

// KeeperInfo is what a keeper process's command line says of it.
type KeeperInfo struct {
	Ends          string // the directory of its runs' Ends: their state dir's
	SupervisorPID int
	Deferred      bool // started with a deferral (fdMailbox on; see keeperdefer.go)
}

// ParseKeeper reads a keeper process's command line (its /proc cmdline
// as argv); false if argv is not a keeper's.
func ParseKeeper(argv []string) (KeeperInfo, bool) {
	if !IsKeeper(argv) {
		return KeeperInfo{}, false
	}
	info, ok := parseKeeperProcFlags(argv[1:])
	return info, ok
}

// parseKeeperProcFlags reads a keeper process's own arguments (see
// startKeeperProc).
func parseKeeperProcFlags(args []string) (KeeperInfo, bool) {
	var info KeeperInfo
	fs := flag.NewFlagSet(KeeperName, flag.ContinueOnError)
	fs.StringVar(&info.Ends, "ends", "", "the directory of the runs' Ends")
	fs.IntVar(&info.SupervisorPID, "supervisor", 0, "the supervisor's pid")
	fs.BoolVar(&info.Deferred, "deferred", false, "deferred runs come in its mailbox")
	fs.SetOutput(io.Discard) // a keeper has no stderr; the supervisor sees the exit
	if fs.Parse(args) != nil || fs.NArg() > 0 || info.SupervisorPID <= 0 {
		return info, false
	}
	return info, true
}

// PidfdExited reports whether the process of pidfd fd has exited.
func PidfdExited(fd int) bool { return readableNow(fd) }

// fdControl is a keeper process's end of its control socket: one
// message per run, the run's descriptors attached.
const fdControl = 3

// KeeperMain is the body of a keeper process, given its arguments after
// argv[0]; it returns the exit code. It keeps every run its supervisor
// hands it (see kept.keep) and exits once the supervisor is gone (the
// control socket's end) and every run it kept is over. Its lifetime is
// its runs', told by sockets: signals are not for it (a terminal's or a
// service manager's are for the supervisor; ending one run is asked on
// its socket, see keeperServer).
func KeeperMain(args []string, leases LeaseKeeper) int {
	info, ok := parseKeeperProcFlags(args)
	if !ok {
		return 2
	}
	// One processor: a keeper's work is short handlers between waits,
	// and a second processor only adds a thread hand-off (a wake-up of
	// another thread) to every message and exit it handles.
	runtime.GOMAXPROCS(1)
	signal.Ignore(unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGPIPE, unix.SIGUSR1, unix.SIGUSR2)
	s := newKeeperServer(leases)
	s.room = newEndRoom(info.Ends)
	defer s.room.remove()
	if info.Deferred {
		s.deferral = openKeeperDeferral(fdMailbox, fdExits, fdExitTable)
	}
	if d := s.deferral; d != nil {
		watched := make(chan struct{})
		go func() { defer close(watched); d.watchExits() }()
		defer func() { d.closeExits(); <-watched }()
	}
	closeListener := s.listen()
	// Ready: the socket above is there before any run is handed over.
	if _, err := unix.Write(fdControl, []byte(msgReady)); err != nil {
		return 1
	}
	// Start-up's code will not run again here: hand its pages back,
	// beside the first runs rather than before them. An error costs RSS
	// only, never a run.
	s.wg.Go(func() { _, _ = exepages.Release() })
	if info.Ends != "" {
		s.wg.Go(func() { removeStaleRooms(info.Ends) })
	}
	s.serve(fdControl)
	s.wg.Wait()
	closeListener()
	return 0
}

// keep keeps one run: it watches while the supervisor lives; when the
// tether reaches its end without "stop", the supervisor's death, it
// takes the supervisor's place: it reads the run's output into its log,
// ends the run at once (-within) or at its deadline, or when asked
// (killed by operator, or replaced), ends what the main process left
// behind, writes the run's End and only then lets go of the lock.
func (k *kept) keep() {
	defer k.close() // the lock last but for the tether: it outlives the End's write
	k.followTether()
	end, orphaned := k.guard()
	if !orphaned {
		return
	}
	if k.f.end != "" {
		end.Notes = k.notes
		if k.writeEnd(end, k.room, endTries, endRetryEvery) != nil {
			return // lost: the next supervisor records the run from what else it knows
		}
	}
	if k.lease != nil {
		_ = k.lease.Release() // once the end is written: the lock outlives the record's write
	}
}

// LeaseKeeper takes over a lease that a supervisor handed its run's keeper
// (Keeper.Handoff): backends.KeepLease (package lock/backends). A keeper given nil ends such a run at
// once when its supervisor dies.
type LeaseKeeper func(handoff []byte) (KeptLease, error)

// KeptLease is a lease a keeper holds for a dead supervisor.
type KeptLease interface {
	// Keep renews it until ctx ends; the channel is closed if it is lost.
	Keep(ctx context.Context) <-chan struct{}
	// Within is how long a lost lease leaves for the run to end.
	Within() time.Duration
	// Release gives it up.
	Release() error
}

// tether is a keeper's end of a run's tether.
type tether struct {
	f  *os.File        // owns fd; nil for a bare descriptor (tests)
	rc syscall.RawConn // waits for it in the runtime's poller; nil: blocking reads
	fd int
}

// newTether takes fd over, non-blocking in the runtime's poller, so that
// a thousand kept runs wait without a thread each.
func newTether(fd int) *tether {
	t := &tether{fd: fd}
	if unix.SetNonblock(fd, true) != nil {
		return t
	}
	t.f = os.NewFile(uintptr(fd), "tether")
	if rc, err := t.f.SyscallConn(); err == nil {
		t.rc = rc
	}
	return t
}

// recv reads a message and its descriptors, waiting for one.
func (t *tether) recv(buf, oob []byte) (n, oobn int, err error) {
	if t.rc == nil {
		for {
			n, oobn, _, _, err = unix.Recvmsg(t.fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
			if err != unix.EINTR {
				return n, oobn, err
			}
		}
	}
	rerr := t.rc.Read(func(fd uintptr) bool {
		n, oobn, err = recvmsgNow(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
		return err != unix.EAGAIN && err != unix.EINTR
	})
	if err == nil {
		err = rerr
	}
	return n, oobn, err
}

func (t *tether) write(msg string) {
	if t.rc != nil { // non-blocking
		_, _ = writeNow(t.fd, []byte(msg))
		return
	}
	_, _ = unix.Write(t.fd, []byte(msg))
}

func (t *tether) close() {
	if t.f != nil {
		t.f.Close()
		return
	}
	unix.Close(t.fd)
}

// readTether reads the tether until the supervisor's "pid N" (and the
// pidfd that comes with it), its "stop", or its end: the run's pid, 0 if
// never told (the supervisor died before or while starting the run: the
// tag still finds the run then), and the pidfd, -1 if none came.
func readTether(t *tether) (pid, pidfd int, started time.Time, handoff []byte, stopped bool) {
	pidfd = -1
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, err := t.recv(buf, oob)
		if err != nil || n == 0 {
			return pid, pidfd, started, handoff, false
		}
		if fds := rightsOf(oob[:oobn]); len(fds) > 0 {
			pidfd = fds[0]
		}
		for _, m := range parseTether(string(buf[:n])) {
			switch m.kind {
			case tetherStop:
				return pid, pidfd, started, handoff, true
			case tetherLease:
				handoff = m.handoff
			case tetherPID:
				pid, started = m.pid, m.started
			}
		}
		if pid > 0 {
			return pid, pidfd, started, handoff, false
		}
	}
}

func rightsOf(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var out []int
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err == nil {
			out = append(out, fds...)
		}
	}
	return out
}

// awaitEOF blocks until the supervisor's "stop" (true: the run is over)
// or the tether's end (false: the supervisor's death).
func awaitEOF(t *tether) bool {
	buf := make([]byte, 256)
	for {
		n, _, err := t.recv(buf, nil)
		if err != nil || n == 0 {
			return false
		}
		for _, m := range parseTether(string(buf[:n])) {
			if m.kind == tetherStop {
				return true
			}
		}
	}
}
