package proc

import (
	"context"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/run"
	"cronvisor/internal/proc/cgroup"
)

// kept is a keeper's view of a run it keeps.
type kept struct {
	f     keeperFlags
	files keptFiles
	tie   *tether
	pid   int  // the run's main process, 0 if never told nor found
	pidfd int  // of pid, -1 if none came
	seen  bool // a process of the run was found after the supervisor died untold
	// pidfdFile holds pidfd in the poller once watched; never closed.
	pidfdFile *os.File
	orphaned  chan struct{} // closed at the tether's end; pid and pidfd are set by then
	stopped   bool          // the supervisor said "stop": the run is over, set before orphaned is closed
	exited    chan struct{} // closed once the main process exited (never without a pidfd)
	exitedAt  time.Time     // set before exited is closed
	exits     exitTable     // where a deferred run's exit may have been seen already; nil: none
	started   time.Time     // when the main process started, as the supervisor said
	parent    int           // the supervisor's pid
	handoff   []byte        // a lease to keep (-lease), as the supervisor sent it
	leases    LeaseKeeper   // what keeps it; nil: the run is ended at once
	lease     KeptLease     // the lease kept, once the supervisor is dead
	urgent    bool          // the lock was lost: the run must be gone within -within
	asks      chan os.Signal
	notes     []string // for the End's Notes (see note)
	room      *endRoom // where its End finds room on a full disk; nil: none
	beats     *beats   // the heartbeat's reader once the supervisor is dead; nil: none
	// letGo, if set, is called once the run's descriptors are closed and
	// before the tether is: whoever lists the kept runs no longer sees
	// this one by the time its supervisor learns it was let go.
	letGo func()
}

// keptFiles are the descriptors a run's keeper was handed with it; -1
// for none (or one handed on: readOutput's pipes).
type keptFiles struct {
	stdout, stderr, lock, session, beats int
}

func newKept(f keeperFlags, tie *tether, files keptFiles) *kept {
	parent := f.run.SupervisorPID
	if parent == 0 {
		parent = os.Getppid()
	}
	return &kept{f: f, tie: tie, files: files, parent: parent, pidfd: -1,
		orphaned: make(chan struct{}), exited: make(chan struct{}), asks: make(chan os.Signal, 1)}
}

// close closes what the keeper still holds of the run, the lock among
// it, and last its end of the tether: the supervisor's stop waits for it.
func (k *kept) close() {
	for _, fd := range []int{k.files.lock, k.files.stdout, k.files.stderr, k.files.session, k.files.beats} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	switch {
	case k.pidfdFile == nil && k.pidfd >= 0:
		unix.Close(k.pidfd)
	case k.pidfdFile != nil && isClosed(k.exited):
		k.pidfdFile.Close()
	} // else watchExit still waits on it: the File's finalizer closes it after
	if k.letGo != nil {
		k.letGo()
	}
	k.tie.close()
}

// followTether learns the run's pid from the tether, then watches the
// main process's exit (telling the supervisor when it happened) and the
// tether's end. A supervisor that died before it told the pid leaves the
// keeper to find the run's main process itself.
func (k *kept) followTether() {
	go func() {
		defer close(k.orphaned)
		k.pid, k.pidfd, k.started, k.handoff, k.stopped = readTether(k.tie)
		if k.stopped {
			return // the run is over
		}
		if k.pid == 0 {
			// The supervisor died before the run started, or between
			// its exec and the "pid N" message.
			k.learnMain()
			k.watchPidfd()
			return
		}
		k.watchPidfd()
		k.stopped = awaitEOF(k.tie)
	}()
}

// watchPidfd watches the main process's exit, if the keeper holds a
// pidfd of it.
func (k *kept) watchPidfd() {
	if k.pidfd >= 0 {
		k.pollPidfd()
		go k.watchExit()
	}
}

// watchExit waits for the main process to exit and tells the supervisor
// when: the process's own end, even when the supervisor is frozen.
// Non-blocking, the pidfd goes to the runtime's poller: the wait holds no
// thread. Where it cannot, poll(2) waits on this thread.
func (k *kept) watchExit() {
	if k.pidfdFile != nil {
		if rc, err := k.pidfdFile.SyscallConn(); err == nil {
			_ = rc.Read(func(uintptr) bool { return PidfdExited(k.pidfd) })
		}
	}
	for !PidfdExited(k.pidfd) {
		p := []unix.PollFd{{Fd: int32(k.pidfd), Events: unix.POLLIN}}
		_, _ = unix.Poll(p, -1)
	}
	k.exitedAt = time.Now()
	if r := k.f.exitSlot; r.set {
		// Seen by the exits' watch while the supervisor lived (or
		// froze): the exit's own time, not this late look's.
		if at := k.exits.seen(r.slot, r.gen, k.started); !at.IsZero() {
			k.exitedAt = at
		}
	}
	close(k.exited)
	k.tie.write(exitedLine(k.exitedAt))
}

// pollPidfd puts the pidfd in the runtime's poller, if it can be made
// non-blocking: the File then owns it.
func (k *kept) pollPidfd() {
	if unix.SetNonblock(k.pidfd, true) == nil {
		k.pidfdFile = os.NewFile(uintptr(k.pidfd), "pidfd")
	}
}

// guard waits for the supervisor's death, then guards the run in its
// place until it is over, and returns its End; false if the supervisor
// saw the run to its end (it said "stop").
func (k *kept) guard() (End, bool) {
	<-k.orphaned
	if k.stopped {
		return End{}, false
	}
	out := k.readOutput()
	k.beats = k.readBeats()
	t := k.scanTree()
	end := End{RunID: runIDOf(k.f.tag), Outcome: Exited, ExitCode: -1, Keeper: os.Getpid(), Run: k.f.run}
	end.Run.Started, end.Run.PID = k.started, k.pid
	if end.Run.SupervisorPID == 0 {
		end.Run.SupervisorPID = k.parent
	}
	end.Run.Host, _ = os.Hostname()
	end.Outcome, end.Reason, end.Replaced = k.wait(k.asks)
	gone := k.exited
	if k.pidfd < 0 {
		gone = closedChan() // not watched: the members' scan alone tells
	}
	grace := k.f.grace
	if k.urgent {
		grace = guardGrace(grace, k.f.within)
	}
	end.Usage = k.endLeaf(grace)
	_ = t.end(gone, grace)
	end.Progress = k.beats.stop().Progress
	out.finish()
	end.Ended = time.Now()
	if end.Outcome == Exited && !k.exitedAt.IsZero() {
		end.Ended = k.exitedAt
	}
	end.ExitCode, end.Signal = exitStatus(k.pidfd, k.pid)
	if end.Outcome == Exited && end.ExitCode < 0 {
		end.Outcome, end.Reason = Canceled, orphanReason(k.pid > 0 || k.seen)
	} else if end.Outcome == Exited && end.Signal != "" {
		end.Reason = "ended by signal " + end.Signal
	}
	return end, true
}

// endLeaf ends the run through its leaf (-cgroup), if it has one, and
// waits for it to be empty: only then is the lock let go. The keeper is
// not in the leaf (it was started before the run, in the supervisor's
// cgroup), so cgroup.kill spares it. It returns what the run cost, read
// from the empty leaf before its removal (Measured false without one).
func (k *kept) endLeaf(grace time.Duration) run.Usage {
	if k.f.cgroup == "" {
		return run.Usage{}
	}
	l, err := cgroup.Open(k.f.cgroup)
	if err != nil {
		return run.Usage{} // removed already, or not a cgroup: the tree's scan ends the run
	}
	if endLeaf(l, grace) != nil {
		return run.Usage{}
	}
	u := leafUsage(l)
	_ = l.Remove()
	return u
}

// wait waits, once the supervisor is dead, for the run's main process to
// exit by itself, for its deadline, or for an operator's signal, and says
// why the run is to be ended (Exited: it was not).
func (k *kept) wait(asks <-chan os.Signal) (Outcome, string, bool) {
	lost, why := k.keepLease()
	if why != "" {
		k.urgent = true // a lease nobody renews: gone within its margin
	}
	if k.f.atOnce || why != "" {
		return Canceled, "supervisor died; ended by its keeper before the lease could expire" + why, false
	}
	var deadline <-chan time.Time
	if !k.f.deadline.IsZero() {
		timer := time.NewTimer(time.Until(k.f.deadline))
		defer timer.Stop()
		deadline = timer.C
	}
	exited, stop := k.exitWatch()
	defer stop()
	select {
	case <-exited:
		return Exited, "", false
	case <-k.sessionLost():
		k.urgent = true
		return Canceled, "lock lost: the server ended the session holding it", false
	case <-lost:
		k.urgent = true
		return Canceled, "lock lost: its keeper could not renew the lease", false
	case <-deadline:
		return TimedOut, "exceeded timeout " + k.f.timeout.String(), false
	case <-k.beats.overdueC():
		return TimedOut, NoHeartbeatReason(k.f.heartbeatTimeout), false
	case sig := <-asks:
		if sig == unix.SIGUSR2 {
			return Canceled, "replaced by a newer fire", true
		}
		return Canceled, "killed by operator", false
	}
}

// keepLease takes over the run's lease (-lease) and keeps renewing it:
// the channel is closed if it is lost. why says why a lease that was
// handed over cannot be kept ("" when there is none, or it is kept): the
// run is then ended at once, before the lease can expire.
func (k *kept) keepLease() (lost <-chan struct{}, why string) {
	if !k.f.lease {
		return nil, ""
	}
	if k.leases == nil || k.handoff == nil {
		return nil, " (no lease hand-off)"
	}
	l, err := k.leases(k.handoff)
	if err != nil {
		return nil, " (" + err.Error() + ")"
	}
	k.lease = l
	return l.Keep(context.Background()), ""
}

// sessionLost is closed when the server ends the session of the run's
// lock (-session): once the supervisor is dead nothing else uses the
// connection, so its hang-up or an error on it (KILL,
// pg_terminate_backend, a server restart, a timeout of the socket's own
// keep-alive) is the session's end. Data alone is not: a supervisor
// killed while a statement of its was on its way leaves the server's
// reply to come, which is read and dropped. Nil without a session.
func (k *kept) sessionLost() <-chan struct{} {
	if !k.f.session {
		return nil
	}
	lost := make(chan struct{})
	go func() {
		defer close(lost)
		for sessionAlive(k.files.session) {
		}
	}()
	return lost
}

// sessionAlive waits for something on the session's socket fd: false
// for its end, true once a late reply has been dropped.
func sessionAlive(fd int) bool {
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN | unix.POLLRDHUP}}
	if _, err := unix.Poll(p, -1); err != nil {
		return err == unix.EINTR
	}
	if p[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
		return false
	}
	var buf [4096]byte
	n, err := unix.Read(fd, buf[:]) // the socket may be non-blocking: EAGAIN is another wait
	return n > 0 || err == unix.EAGAIN || err == unix.EINTR
}

// readBeats takes over the run's heartbeat pipe from the dead
// supervisor (-beats): its clock starts now, since the supervisor's last
// beat is not known here. Nil without a pipe.
func (k *kept) readBeats() *beats {
	if k.files.beats < 0 {
		return nil
	}
	r := os.NewFile(uintptr(k.files.beats), "heartbeat")
	k.files.beats = -1 // the reader's now: stop closes it
	return readBeats(r, k.f.heartbeatTimeout, time.Now(), nil)
}

// orphanReason is the reason of a run whose exit status the keeper could
// not learn; seen: it knows the run started.
func orphanReason(seen bool) string {
	if !seen {
		return "supervisor died as the run was starting; whether it ran is unknown"
	}
	return "supervisor died during the run; exit status unknown"
}

// lockOf is the run's lock as the process scan compares it, nil if it
// cannot be read.
func lockOf(fd int) *openFile {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return nil
	}
	return &openFile{fd: fd, dev: st.Dev, ino: st.Ino}
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// runIDOf is the run id of a "CRONVISOR_RUN_ID=ID" tag.
func runIDOf(tag string) string {
	_, id, _ := strings.Cut(tag, "=")
	return id
}
