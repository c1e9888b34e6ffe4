package proc

import (
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The keeper's side of deferred hand-overs (see keeperdefer.go): its
// mailbox, read only when it sweeps, the tethers it holds meanwhile, and
// the watch of the runs' exits.

// The descriptors a keeper started with -deferred finds its deferral at,
// after its control socket (fdControl).
const (
	fdMailbox = fdControl + 1 + iota
	fdExits
	fdExitTable
)

// keeperDeferral is a keeper's means of deferred runs.
type keeperDeferral struct {
	mail  int      // the mailbox's keeper end
	exits *os.File // the epoll instance of the runs' pidfds, in the runtime's poller
	table exitTable
	mu    sync.Mutex
	held  []int // tethers of runs whose supervisor has not let go of them
}

// openKeeperDeferral takes over a keeper's mailbox, exits' epoll
// instance and table (fdMailbox, fdExits, fdExitTable in a keeper
// process); nil if they are not usable, the runs then kept as they come.
func openKeeperDeferral(mail, exits, table int) *keeperDeferral {
	t, err := mapExitTable(table)
	unix.Close(table)
	if err != nil || unix.SetNonblock(exits, true) != nil {
		return nil
	}
	return &keeperDeferral{mail: mail, exits: os.NewFile(uintptr(exits), "exits"), table: t}
}

// watchExits writes the time of each run's exit into the table as the
// epoll instance tells it, until closeExits. Its wait is the runtime's
// poller's: no thread sits in epoll_wait.
func (d *keeperDeferral) watchExits() {
	rc, err := d.exits.SyscallConn()
	if err != nil {
		return
	}
	events := make([]unix.EpollEvent, 64)
	_ = rc.Read(func(fd uintptr) bool {
		for {
			n := epollNow(int(fd), events)
			now := time.Now()
			for _, e := range events[:max(n, 0)] {
				d.table.seeKey(e, now)
			}
			if n < len(events) {
				return false // wait for more (the poller's edge re-arms)
			}
		}
	})
}

// closeExits ends watchExits.
func (d *keeperDeferral) closeExits() { d.exits.Close() }

// collect takes every tether waiting in the mailbox into held.
func (d *keeperDeferral) collect() {
	buf := make([]byte, 16)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, err := recvmsgNow(d.mail, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil || (n == 0 && oobn == 0) {
			return
		}
		d.held = append(d.held, rightsOf(oob[:oobn])...)
	}
}

// tetherState is what a held tether says of its run.
type tetherState int

const (
	tetherLive    tetherState = iota // its supervisor holds it
	tetherOver                       // let go, the packet taken back: over
	tetherOrphan                     // let go with the packet in it: to guard
	tetherPending                    // its supervisor's end open, the packet in it
)

func stateOf(fd int) tetherState {
	letGo := pollNow(fd, unix.POLLIN|unix.POLLRDHUP)&(unix.POLLHUP|unix.POLLRDHUP) != 0
	full := queuedNow(fd) > 0
	switch {
	case letGo && full:
		return tetherOrphan
	case letGo:
		return tetherOver
	case full:
		return tetherPending
	}
	return tetherLive
}

// sweep looks at the deferred runs' tethers: those let go of empty are
// closed, those let go with their packet (a dead or departing
// supervisor) are taken over and guarded. final (the control socket's
// end: the supervisor is gone, even if the kernel has not closed all of
// its descriptors yet) takes over every tether that still holds its
// packet.
func (s *keeperServer) sweep(final bool) {
	d := s.deferral
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.collect()
	held := d.held[:0]
	for _, fd := range d.held {
		switch st := stateOf(fd); {
		case st == tetherOrphan || (final && st == tetherPending):
			s.takeOver(fd)
		case st == tetherOver || final:
			unix.Close(fd)
		default:
			held = append(held, fd)
		}
	}
	d.held = held
}

// takeOver reads a tether's packet and keeps its run as if it had come
// on the control socket, the tether the run's own; a tether without one
// (its supervisor died taking it back) is closed.
func (s *keeperServer) takeOver(fd int) {
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(6*4))
	n, oobn, err := recvmsgNow(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
	fds := rightsOf(oob[:max(oobn, 0)])
	if err != nil || !strings.HasPrefix(string(buf[:max(n, 0)]), KeeperName+"\x00") {
		for _, f := range fds {
			unix.Close(f)
		}
		unix.Close(fd)
		return
	}
	s.keep(decodeHandover(buf[:n]), append([]int{fd}, fds...))
}
