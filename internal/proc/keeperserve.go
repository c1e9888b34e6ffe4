package proc

import (
	"bufio"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// keeperServer is a keeper process: the runs it keeps, and the socket
// on which the next supervisor asks about them.
type keeperServer struct {
	leases   LeaseKeeper
	deferral *keeperDeferral // nil: no deferred runs
	room     *endRoom        // the room of the kept runs' Ends
	wg       sync.WaitGroup  // the kept runs
	mu       sync.Mutex
	runs     map[string]*keptEntry // by run id
}

// keptEntry is a kept run as the socket shows it.
type keptEntry struct {
	k    *kept
	done chan struct{} // closed once the keeper let go of the run
}

func newKeeperServer(leases LeaseKeeper) *keeperServer {
	return &keeperServer{leases: leases, runs: map[string]*keptEntry{}}
}

// serve receives runs on the control socket until its end: the
// supervisor's death (or its exit).
//
// The socket is read through the runtime's poller, not by a thread
// blocked in recvmsg: a thread that sits in a system call while runs'
// goroutines have work makes the runtime's monitor take its processor
// back and then poll every 20 µs, which at a hundred runs a second was a
// third of this process's CPU.
func (s *keeperServer) serve(fd int) {
	if err := unix.SetNonblock(fd, true); err != nil {
		return // the supervisor sees the control socket unanswered
	}
	ctl := os.NewFile(uintptr(fd), "control")
	defer ctl.Close()
	rc, err := ctl.SyscallConn()
	if err != nil {
		return
	}
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(6*4))
	for {
		var n, oobn int
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			n, oobn, rerr = recvmsgNow(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
			return rerr != unix.EAGAIN && rerr != unix.EINTR
		})
		if err != nil || rerr != nil || n == 0 {
			// The supervisor is gone (or let go of this keeper): its
			// deferred runs still going are this keeper's now.
			s.sweep(true)
			return
		}
		if oobn == 0 && string(buf[:n]) == msgSweep {
			s.sweep(false)
			continue
		}
		s.keep(decodeHandover(buf[:n]), rightsOf(oob[:oobn]))
	}
}

// keep starts keeping the run of one message: its keeperArgs, and its
// tether, pipes' read ends, lock (-lock) and session (-session). A
// message that does not say what it carries is dropped, its descriptors
// closed: the supervisor sees its tether's end.
func (s *keeperServer) keep(args []string, fds []int) {
	f, ok := parseKeeperFlags(args[min(1, len(args)):])
	want := 3
	if f.lock {
		want++
	}
	if f.session {
		want++
	}
	if f.beats {
		want++
	}
	if !ok || !IsKeeper(args) || len(fds) != want {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return
	}
	files := keptFiles{stdout: fds[1], stderr: fds[2], lock: -1, session: -1, beats: -1}
	next := 3
	if f.lock {
		files.lock, next = fds[next], next+1
	}
	if f.session {
		files.session, next = fds[next], next+1
	}
	if f.beats {
		files.beats = fds[next]
	}
	k := newKept(f, newTether(fds[0]), files)
	k.leases = s.leases
	if s.deferral != nil {
		k.exits = s.deferral.table
	}
	e := &keptEntry{k: k, done: make(chan struct{})}
	id := runIDOf(f.tag)
	k.letGo = func() {
		s.mu.Lock()
		if s.runs[id] == e {
			delete(s.runs, id)
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.runs[id] = e
	n := len(s.runs)
	s.mu.Unlock()
	if f.end != "" {
		k.room = s.room
		if err := s.room.reserve(n); err != nil {
			k.note("%v", err)
		}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		k.keep()
		close(e.done)
	}()
}

// keeperAddress is the socket of keeper process pid: abstract (nothing
// to remove after a SIGKILL), open to its own user and root only.
func keeperAddress(pid int) string { return "@cronvisor-keeper-" + strconv.Itoa(pid) }

// listen serves the keeper's socket until the returned function is
// called. A socket that cannot be made leaves the runs kept, and only
// not reachable: the next supervisor records them from their Ends.
func (s *keeperServer) listen() (closeListener func()) {
	l, err := net.Listen("unix", keeperAddress(os.Getpid()))
	if err != nil {
		return func() {}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				s.answer(c.(*net.UnixConn))
			}()
		}
	}()
	return func() { l.Close(); wg.Wait() }
}

// answer serves one request (see KeptRuns, AskKept and WatchKept).
func (s *keeperServer) answer(c *net.UnixConn) {
	if !trusted(c) {
		return
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return
	}
	verb, id := parseRequest(line)
	s.sweep(false) // runs whose supervisor died a moment ago are kept first
	s.mu.Lock()
	e := s.runs[id]
	var list strings.Builder
	for id, e := range s.runs {
		list.WriteString(runsLine(KeptInfo{RunID: id, SupervisorPID: e.k.parent, Job: e.k.f.run.Job}))
	}
	s.mu.Unlock()
	switch {
	case verb == verbRuns:
		_, _ = c.Write([]byte(list.String()))
	case e == nil:
		_, _ = c.Write([]byte(answerUnknown + "\n"))
	case verb == verbWatch:
		<-e.done // the keeper's exit ends it too: the connection is closed
	case verb == verbEnd || verb == verbReplace:
		sig := os.Signal(unix.SIGUSR1)
		if verb == verbReplace {
			sig = unix.SIGUSR2
		}
		select {
		case e.k.asks <- sig:
		default: // asked already
		}
		_, _ = c.Write([]byte(answerOK + "\n"))
	}
}

// trusted reports whether the peer is this process's user or root: an
// abstract socket has no file mode to keep others out.
func trusted(c *net.UnixConn) bool {
	rc, err := c.SyscallConn()
	if err != nil {
		return false
	}
	var cred *unix.Ucred
	_ = rc.Control(func(fd uintptr) {
		cred, _ = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	return cred != nil && (cred.Uid == 0 || int(cred.Uid) == os.Geteuid())
}
