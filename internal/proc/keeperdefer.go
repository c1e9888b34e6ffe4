package proc

import (
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A deferred hand-over gives a run to its keeper without waking it, and
// the supervisor never waits for it. An eager one (keeper.go) wakes the
// keeper at the hand-over, the pid, the exit and the stop, and makes the
// supervisor wait for its hang-up: at one run a second those wake-ups,
// in both processes, were a quarter of a fire's CPU. Deferred:
//
//   - The run's packet (its keeperArgs and its descriptors) is sent into
//     the run's tether, a socket pair, and left there: in flight, its
//     descriptors are held by the kernel, not by either process. The
//     tether's keeper end is mailed to the keeper on a socket it does not
//     poll. The run is guarded from its first instruction all the same:
//     if the supervisor dies, the keeper takes the packet out.
//   - The pid line and the run's pidfd follow into the tether the same
//     way. The pidfd is also added to an epoll instance of the keeper's:
//     its one wake-up a run, at the main process's exit, writes the
//     exit's time into the exitTable, whence the supervisor reads it.
//   - At the run's end the supervisor takes its packet back (the lock's
//     copy with it) and closes both ends: nothing of the run is left in
//     the keeper to let go of. If the keeper took the packet first (it
//     was asked to sweep as the supervisor let go), the stop is eager.
//   - The keeper sweeps its mailbox when asked: every so many runs, at a
//     detach, and at the control socket's end. A tether whose supervisor
//     end is closed with the packet still in it is a run to guard; an
//     empty one is a run that is over (see keepersweep.go).
//
// Runs under a lease or a session (Handoff, Session, EndAtOnce) are
// handed over eagerly: their keeper must act while the supervisor lives.

// deferral is a keeper process's means of deferred hand-overs, on the
// supervisor's side.
type deferral struct {
	mail    int // SOCK_SEQPACKET, non-blocking: one message per run, its tether's keeper end attached
	exits   int // the keeper's epoll instance of the runs' pidfds
	table   exitTable
	mu      sync.Mutex
	refs    int   // the keeper process's, and one a deferred run's: closed at 0
	free    []int // slots of the table given back
	used    int   // slots handed out so far
	mailed  atomic.Int64
	asked   atomic.Int64 // mailed at the last sweep asked for
	refused atomic.Int64 // mails refused since the last one taken (a full mailbox)
}

// newDeferral makes a keeper's mailbox, epoll instance and table, and
// returns the copies its process is started with (mailbox, epoll,
// table), which the caller closes once it has started.
func newDeferral() (*deferral, []*os.File, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	d := &deferral{mail: pair[0], exits: -1, refs: 1}
	theirs := []*os.File{os.NewFile(uintptr(pair[1]), "mailbox")}
	fail := func(err error) (*deferral, []*os.File, error) {
		d.close()
		for _, f := range theirs {
			f.Close()
		}
		return nil, nil, err
	}
	if err := unix.SetNonblock(d.mail, true); err != nil {
		return fail(os.NewSyscallError("fcntl", err))
	}
	if d.exits, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return fail(os.NewSyscallError("epoll_create1", err))
	}
	// The keeper's copy, closed here once it started. Close-on-exec like
	// every descriptor of this process (the keeper gets it through
	// ExtraFiles): a plain dup would leak it into any run forked
	// meanwhile.
	exits, err := unix.FcntlInt(uintptr(d.exits), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return fail(os.NewSyscallError("fcntl", err))
	}
	theirs = append(theirs, os.NewFile(uintptr(exits), "exits"))
	table, tableFD, err := newExitTable()
	if err != nil {
		return fail(os.NewSyscallError("memfd", err))
	}
	d.table = table
	theirs = append(theirs, os.NewFile(uintptr(tableFD), "exits table"))
	return d, theirs, nil
}

// hold takes a reference for a run; false once the deferral is closed.
func (d *deferral) hold() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.refs == 0 {
		return false
	}
	d.refs++
	return true
}

// drop lets go of a reference, the last closing the deferral; nil-safe.
func (d *deferral) drop() {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.refs--
	last := d.refs == 0
	d.mu.Unlock()
	if last {
		d.close()
	}
}

// close lets go of the supervisor's side; nil-safe.
func (d *deferral) close() {
	if d == nil {
		return
	}
	unix.Close(d.mail)
	if d.exits >= 0 {
		unix.Close(d.exits)
	}
	if d.table != nil {
		_ = unix.Munmap(d.table)
	}
}

// take claims a slot of the table; false if all are in use.
func (d *deferral) take() (slot int, gen uint64, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch n := len(d.free); {
	case n > 0:
		slot, d.free = d.free[n-1], d.free[:n-1]
	case d.used < exitSlots:
		slot, d.used = d.used, d.used+1
	default:
		return 0, 0, false
	}
	return slot, d.table.claim(slot), true
}

func (d *deferral) give(slot int) {
	d.mu.Lock()
	d.free = append(d.free, slot)
	d.mu.Unlock()
}

// sweepEvery is how many runs may wait in a keeper's mailbox, at least,
// before it is asked to sweep (more while more runs are in flight, so
// that a sweep's cost stays a constant a run), and mailboxAsk how many
// at most: the mailbox's default buffer holds some 270 mails, and a mail
// it refuses is a run handed over eagerly, four wake-ups of the keeper.
const (
	sweepEvery = 32
	mailboxAsk = 128
)

// sweepAfter is how many mails may wait before a sweep is asked for,
// with kept runs in flight.
func sweepAfter(kept int64) int64 { return min(max(sweepEvery, kept), mailboxAsk) }

// deferredRun is the supervisor's side of a deferred hand-over.
type deferredRun struct {
	d       *deferral
	mine    int // the tether's supervisor end
	theirs  int // this process's copy of the keeper end, to take the packet back from
	slot    int
	gen     uint64
	started time.Time
}

// handDeferred hands a run to kp without waking it; nil if kp cannot
// take it so (no deferral, the table or the mailbox full, a mailbox
// whose keeper is gone): the run is then handed over eagerly.
func (kp *keeperProc) handDeferred(args []string, files []int) *deferredRun {
	d := kp.deferral
	if d == nil || !d.hold() {
		return nil
	}
	slot, gen, ok := d.take()
	if !ok {
		d.drop()
		return nil
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		d.give(slot)
		d.drop()
		return nil
	}
	r := &deferredRun{d: d, mine: pair[0], theirs: pair[1], slot: slot, gen: gen}
	packet := encodeHandover(append(args, "-exit-slot", exitSlotArg(slot, gen)))
	if unix.Sendmsg(r.mine, packet, unix.UnixRights(files...), nil, unix.MSG_NOSIGNAL) != nil {
		r.close()
		return nil
	}
	if err := unix.Sendmsg(d.mail, []byte(msgRun), unix.UnixRights(r.theirs), nil, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL); err != nil {
		if err == unix.EAGAIN {
			kp.mailboxFull()
		}
		r.close()
		return nil
	}
	d.refused.Store(0)
	kp.kept.Add(1)
	if n := d.mailed.Add(1); n-d.asked.Load() >= sweepAfter(kp.kept.Load()) {
		d.asked.Store(n)
		kp.askSweep()
	}
	return r
}

// mailboxFull asks for a sweep when the mailbox refused a mail: at the
// first refusal, and every sweepEvery after in case an ask was lost (the
// control socket's buffer full). Without it a full mailbox stayed full,
// since only mails taken count towards the next ask.
func (kp *keeperProc) mailboxFull() {
	if kp.deferral.refused.Add(1)%sweepEvery == 1 {
		kp.askSweep()
	}
}

// watch adds the run's pidfd to the keeper's exits and sends it into
// the tether with the pid line.
func (r *deferredRun) watch(pid int, started time.Time) {
	r.started = started
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		_ = unix.Sendmsg(r.mine, []byte(pidLine(pid, started)), nil, nil, unix.MSG_NOSIGNAL)
		return
	}
	defer unix.Close(fd) // the copy in flight keeps it in the keeper's epoll
	key := exitKey(r.slot, r.gen)
	_ = unix.EpollCtl(r.d.exits, unix.EPOLL_CTL_ADD, fd, &key)
	_ = unix.Sendmsg(r.mine, []byte(pidLine(pid, started)), unix.UnixRights(fd), nil, unix.MSG_NOSIGNAL)
}

// exitedAt is when the keeper saw the main process exit; zero if not.
func (r *deferredRun) exitedAt() time.Time { return r.d.table.seen(r.slot, r.gen, r.started) }

// reclaim takes everything still in flight in the tether back, closing
// the descriptors that come with it; false if the packet was not among
// it (the keeper took it: it holds the run's descriptors).
func (r *deferredRun) reclaim() bool {
	buf := make([]byte, len(KeeperName)+1)
	oob := make([]byte, unix.CmsgSpace(8*4))
	took := false
	for {
		n, oobn, err := recvmsgNow(r.theirs, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil || (n == 0 && oobn == 0) {
			return took
		}
		for _, fd := range rightsOf(oob[:oobn]) {
			unix.Close(fd)
		}
		took = took || string(buf[:n]) == KeeperName+"\x00"
	}
}

// stop takes the run's descriptors back from its tether and closes it.
// If the keeper took them first, the stop is eager: "stop", then wait
// for the keeper to let go (kill, if it does not within stopWait). A
// detached run's is nothing.
func (r *deferredRun) stop(kill func()) {
	if r.mine < 0 {
		return // detached: the keeper has it
	}
	took := r.reclaim()
	r.closeTheirs() // its hang-up, if the keeper holds the run, is the keeper's close alone
	if !took {
		_ = unix.Sendmsg(r.mine, []byte(stopLine), nil, nil, unix.MSG_NOSIGNAL)
		if !awaitHangUpBlocking(r.mine, stopWait) {
			kill()
		}
	}
	r.close()
}

// awaitHangUpBlocking is awaitHangUp for a blocking descriptor outside
// the runtime's poller, reading what comes until its end.
func awaitHangUpBlocking(fd int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	buf := make([]byte, 256)
	for {
		n, err, ok := readBefore(fd, deadline, buf)
		switch {
		case !ok:
			return false
		case err == unix.EINTR || err == unix.EAGAIN:
		case err != nil || n == 0:
			return true // end of file, or the socket's error: the keeper let go
		}
	}
}

// closeTheirs closes this process's copy of the keeper end.
func (r *deferredRun) closeTheirs() {
	if r.theirs >= 0 {
		unix.Close(r.theirs)
		r.theirs = -1
	}
}

// close closes both ends and gives the slot back; once.
func (r *deferredRun) close() {
	if r.mine < 0 {
		return
	}
	r.closeTheirs()
	unix.Close(r.mine)
	r.mine = -1
	r.d.give(r.slot)
	r.d.drop()
}
