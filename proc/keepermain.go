package proc

import (
	"context"
	"encoding/base64"
	"flag"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// keeperFlags are a keeper's arguments (see keeperArgs).
type keeperFlags struct {
	tag, end, log    string
	cgroup           string
	grace            time.Duration
	atOnce, session  bool
	lease            bool
	within           time.Duration
	timeout          time.Duration
	deadline         time.Time
	lock             bool
	deadlineArgument string
	run              KeptRun
	slotArgument     string
}

func parseKeeperFlags(args []string) (keeperFlags, bool) {
	var f keeperFlags
	fs := flag.NewFlagSet(KeeperName, flag.ContinueOnError)
	fs.StringVar(&f.tag, "tag", "", "the run's KEY=VALUE environment tag")
	fs.DurationVar(&f.grace, "grace", 0, "delay between SIGTERM and SIGKILL")
	fs.BoolVar(&f.atOnce, "at-once", false, "end the run at once when the supervisor dies")
	fs.BoolVar(&f.session, "session", false, "fd 7 is the connection whose session holds the run's lock")
	fs.BoolVar(&f.lease, "lease", false, "a lease hand-off comes on the tether")
	fs.DurationVar(&f.within, "within", 0, "how long a lost lease leaves the run")
	fs.StringVar(&f.deadlineArgument, "deadline", "", "RFC 3339 time at which the run is ended")
	fs.DurationVar(&f.timeout, "timeout", 0, "the run's timeout, for the end's reason")
	fs.StringVar(&f.end, "end", "", "where to write the run's end")
	fs.StringVar(&f.log, "log", "", "the run's output file, appended to once the supervisor is dead")
	fs.BoolVar(&f.lock, "lock", false, "fd 4 is the run's lock")
	fs.StringVar(&f.cgroup, "cgroup", "", "the run's cgroup leaf")
	fs.StringVar(&f.run.Job, "job", "", "the run's job")
	fs.IntVar(&f.run.SupervisorPID, "supervisor", 0, "the supervisor's pid")
	fs.StringVar(&f.slotArgument, "slot", "", "the run's slot (RFC 3339)")
	fs.IntVar(&f.run.Attempt, "attempt", 0, "the run's attempt in its slot")
	fs.BoolVar(&f.run.Manual, "manual", false, "the run is a manual one")
	fs.SetOutput(io.Discard) // a keeper has no stderr; the supervisor sees the exit
	if fs.Parse(args) != nil || fs.NArg() > 0 {
		return f, false
	}
	if f.slotArgument != "" {
		slot, err := time.Parse(time.RFC3339Nano, f.slotArgument)
		if err != nil {
			return f, false
		}
		f.run.Slot = slot
	}
	if f.deadlineArgument != "" {
		d, err := time.Parse(time.RFC3339Nano, f.deadlineArgument)
		if err != nil {
			return f, false
		}
		f.deadline = d
	}
	return f, true
}

// KeeperInfo is what a keeper's command line says of the run it keeps.
type KeeperInfo struct {
	RunID, Job, End string
	SupervisorPID   int
}

// ParseKeeper reads a keeper's command line (its /proc cmdline as argv);
// false if argv is not a keeper's.
func ParseKeeper(argv []string) (KeeperInfo, bool) {
	if !IsKeeper(argv) {
		return KeeperInfo{}, false
	}
	f, ok := parseKeeperFlags(argv[1:])
	return KeeperInfo{RunID: runIDOf(f.tag), Job: f.run.Job, End: f.end, SupervisorPID: f.run.SupervisorPID}, ok
}

// PidfdExited reports whether the process of pidfd fd has exited.
func PidfdExited(fd int) bool {
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(p, 0)
	return err == nil && n > 0
}

// KeeperMain is the body of a keeper process, given its arguments after
// argv[0]; it returns the exit code. While its supervisor lives it only
// watches: it tells the supervisor when the run's main process exited
// ("exited UNIXNANO"). When the tether reaches its end, the supervisor's
// death, it takes the supervisor's place: it reads the run's output into
// its log, ends the run at once (-within) or at its deadline, on SIGUSR1
// (killed by operator) or SIGUSR2 (replaced), ends what the main process
// left behind, writes the run's End and only then lets go of the lock.
func KeeperMain(args []string, leases LeaseKeeper) int {
	f, ok := parseKeeperFlags(args)
	if !ok {
		return 2
	}
	// Its lifetime is the run's, told by the tether: a terminal's or a
	// service manager's signals for the supervisor are not for it.
	signal.Ignore(unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGPIPE)
	asks := make(chan os.Signal, 1)
	signal.Notify(asks, unix.SIGUSR1, unix.SIGUSR2)
	k := newKept(f)
	k.leases = leases
	k.followTether(os.NewFile(fdTether, "tether"))
	if f.lock {
		defer os.NewFile(fdLock, "lock").Close() // the lock outlives the End's write
	}
	end := k.guard(asks)
	if f.end != "" {
		if err := WriteEnd(f.end, end); err != nil {
			return 1
		}
	}
	if k.lease != nil {
		_ = k.lease.Release() // once the end is written: the lock outlives the record's write
	}
	return 0
}

// LeaseKeeper takes over a lease that a supervisor handed its run's keeper
// (Keeper.Handoff): lock.KeepLease. A keeper given nil ends such a run at
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

// readTether reads the tether until the supervisor's "pid N" (and the
// pidfd that comes with it) or its end: the run's pid, 0 if never told
// (the supervisor died before or while starting the run: the tag still
// finds the run then), and the pidfd, -1 if none came.
func readTether(fd int) (pid, pidfd int, started time.Time, handoff []byte) {
	pidfd = -1
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return pid, pidfd, started, handoff
		}
		if fds := rightsOf(oob[:oobn]); len(fds) > 0 {
			pidfd = fds[0]
		}
		for _, line := range strings.Split(string(buf[:n]), "\n") {
			f := strings.Fields(line)
			if len(f) == 2 && f[0] == "lease" {
				handoff, _ = base64.StdEncoding.DecodeString(f[1])
			}
			if len(f) < 2 || f[0] != "pid" {
				continue
			}
			if v, err := strconv.Atoi(f[1]); err == nil && v > 0 {
				pid = v
			}
			if len(f) > 2 {
				if ns, err := strconv.ParseInt(f[2], 10, 64); err == nil {
					started = time.Unix(0, ns)
				}
			}
		}
		if pid > 0 {
			return pid, pidfd, started, handoff
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

// awaitEOF blocks until the tether's end: the supervisor's death.
func awaitEOF(fd int) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return
		}
	}
}

// parseExited reads a keeper's "exited UNIXNANO" message; zero if it is
// not one.
func parseExited(msg string) time.Time {
	word, arg, _ := strings.Cut(strings.TrimSpace(msg), " ")
	ns, err := strconv.ParseInt(arg, 10, 64)
	if word != "exited" || err != nil {
		return time.Time{}
	}
	return time.Unix(0, ns)
}
