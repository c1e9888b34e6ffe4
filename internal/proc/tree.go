package proc

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
)

// maxPoll caps the pause between /proc scans while waiting for a run's
// processes to go: short enough that a run ends promptly, long enough that a
// long grace period costs little CPU.
const maxPoll = 100 * time.Millisecond

// tree finds and ends the processes of one run (see the package doc for what
// belongs to a run). It is used by one goroutine only.
type tree struct {
	self   int       // the supervisor: it holds the lock file too, but is never part of a run
	keeper int       // the run's keeper, 0 if none: it holds the lock file too, and outlives the run
	pgid   int       // the main process's pid
	tag    []byte    // "KEY=VALUE" environment entry, or nil
	lock   *openFile // Spec.ExtraFiles[0], or nil
	// reaped is closed once the main process has been waited for: pgid
	// then names no child of this process (nil: not known, looked at).
	reaped <-chan struct{}
}

func newTree(spec Spec) (*tree, error) {
	t := &tree{self: procfs.Self()}
	if spec.Tag != "" {
		t.tag = []byte(spec.Tag)
	}
	if len(spec.ExtraFiles) > 0 && spec.ExtraFiles[0] != nil {
		var err error
		if t.lock, err = newOpenFile(spec.ExtraFiles[0]); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// isMember reports whether pid is a live process of the run; the cheap
// process-group test comes first, the fd scan last.
func (t *tree) isMember(pid int) bool {
	if pid == t.self || pid == t.keeper {
		return false
	}
	st, err := procfs.ReadStat(pid)
	if err != nil || !st.Alive() {
		return false
	}
	return st.PGRP == t.pgid ||
		(t.tag != nil && procfs.HasEnv(pid, t.tag)) ||
		(t.lock != nil && t.lock.heldBy(t.self, pid))
}

// members lists the live processes of the run.
func (t *tree) members() []int {
	// A child that another run is forking has, until it execs, a copy of
	// every descriptor of this process, this run's lock file included: it
	// must not be taken for a member. os/exec holds ForkLock from before
	// the fork until the exec (CLONE_VFORK), so holding it for reading
	// waits those children out.
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	cands := t.candidates()
	out := t.membersAmong(cands)
	if len(out) == 0 && len(cands) > 0 && subreaper.Load() {
		// The children lists can miss a process while the kernel reparents
		// it; a second look, an instant later, before declaring the run gone.
		// Not when the first listed no process at all: one being reparented
		// has a parent that is ours or a descendant of ours (a zombie is
		// listed until reaped), so it would have listed that parent; and
		// with none listed there is no process left to fork one.
		out = t.membersAmong(t.candidates())
	}
	return out
}

func (t *tree) membersAmong(cands []int) []int {
	var out []int
	for _, pid := range cands {
		if t.isMember(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// candidates are the processes that may belong to the run. With this
// process a child subreaper, every process of every run descends from it
// (orphans are reparented here, not to init), so walking its descendants
// replaces reading stat, environ and fds of every process on the machine:
// that scan was most of the cost of ending a run (BENCHMARKS.md). The
// subtrees of the other processes this one started (other runs' main
// processes, keepers; our children until reaped) are left out: what
// descends from another run's main process was forked by that run, and
// a keeper forks nothing, so none of it can be this run's. Checking them
// made ending N concurrent runs cost N² process inspections, and
// listing a keeper's threads' children was a tenth of the supervisor's
// CPU at 1,000 runs a second.
func (t *tree) candidates() []int {
	if subreaper.Load() {
		if roots, ok := orphans(); ok {
			// The main process, if not reaped yet, is a child of
			// whichever thread forked it; once reaped, its pid is
			// nobody's to look at (one read of a missing file a run).
			if !isClosed(t.reaped) {
				if st, err := procfs.ReadStat(t.pgid); err == nil && st.PPID == t.self {
					roots = append(roots, t.pgid)
				}
			}
			return subtrees(roots, t.otherStarted)
		}
	}
	all, err := procfs.PIDs()
	if err != nil {
		return nil
	}
	return all
}

// otherStarted reports whether pid is a process this one started other
// than the run's main process.
func (t *tree) otherStarted(pid int) bool {
	if pid == t.pgid {
		return false
	}
	_, ok := started.Load(pid)
	return ok
}

// signal sends sig to pids that are still members. Going through a pidfd and
// checking membership again means a pid that exited and was reused since the
// scan is never signalled.
func (t *tree) signal(pids []int, sig unix.Signal) {
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if errors.Is(err, unix.ENOSYS) {
			_ = unix.Kill(pid, sig) // kernel < 5.3: accept the tiny reuse window
			continue
		}
		if err != nil {
			continue // already gone
		}
		syscall.ForkLock.RLock() // see members
		if t.isMember(pid) {
			_ = unix.PidfdSendSignal(fd, sig, nil, 0)
		}
		syscall.ForkLock.RUnlock()
		unix.Close(fd)
	}
}

// end ends whatever is left of the run, KillMode=control-group style:
// SIGTERM, SIGKILL after grace, and returns once the main process has been
// reaped and no member is left, or ErrSurvivors after survivorWait.
func (t *tree) end(waited <-chan struct{}, grace time.Duration) error {
	left := t.members()
	if len(left) == 0 && isClosed(waited) {
		return nil
	}
	t.signal(left, unix.SIGTERM)
	t.signal(left, unix.SIGCONT) // a stopped process acts on SIGTERM only once continued (as systemd does)
	if t.waitGone(waited, grace, 0) {
		return nil
	}
	if t.waitGone(waited, survivorWait, unix.SIGKILL) {
		return nil
	}
	return fmt.Errorf("%w: pids %v", ErrSurvivors, t.members())
}

// waitGone polls until the run is gone or d has passed. With sig set it is
// sent on every round, so processes forked in the meantime get it too.
func (t *tree) waitGone(waited <-chan struct{}, d time.Duration, sig unix.Signal) bool {
	deadline := time.Now().Add(d)
	for pause := time.Millisecond; ; pause = min(2*pause, maxPoll) {
		left := t.members()
		if len(left) == 0 {
			if isClosed(waited) {
				return true
			}
			// Only the main process's reaping is left: wait for it, then
			// look once more, rather than poll.
			select {
			case <-waited:
				continue
			case <-time.After(time.Until(deadline)):
				return false
			}
		}
		if sig != 0 {
			t.signal(left, sig)
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return false
		}
		time.Sleep(min(pause, wait))
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
