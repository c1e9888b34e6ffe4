package proc

import (
	"context"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
)

// zombieSettle is how long a zombie child stays uncollected before the
// reaper takes it for an orphan: os/exec collects its own children within
// microseconds of their exit.
const zombieSettle = 500 * time.Millisecond

// children is the set of pids Run has started and not yet waited for.
// It is package state because the thing it guards is process-wide: the
// kernel gives a child's exit status to whichever wait call in this process
// comes first, so Run and the reaper must agree on one registry.
var children = struct {
	sync.Mutex
	pids map[int]struct{}
}{pids: map[int]struct{}{}}

// starting counts the startRegistered calls between their fork and their
// registration. The reaper reaps nothing while it is not zero, so it can
// never take one of Run's children for an unregistered zombie, even one
// that exits before Start returns. (Holding the registry's lock across
// Start did the same, but made every run's end wait for the forks queued
// behind that lock: with hundreds of fires a second, runs stopped
// ending.)
var starting atomic.Int64

// startRegistered starts cmd (a run's main process, a keeper, the trace
// probe) and registers its pid.
func startRegistered(cmd *exec.Cmd) error {
	starting.Add(1)
	defer starting.Add(-1)
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	started.Store(pid, struct{}{})
	children.Lock()
	children.pids[pid] = struct{}{}
	children.Unlock()
	return nil
}

// started holds the pids of the registry, as keys, for the membership
// walks: lock-free, since they run under ForkLock, and a copy of the
// registry per walk made ending N runs quadratic again.
var started sync.Map

func unregister(pid int) {
	started.Delete(pid)
	children.Lock()
	defer children.Unlock()
	delete(children.pids, pid)
}

// EnableSubreaper makes this process the subreaper of its descendants
// (prctl PR_SET_CHILD_SUBREAPER): a run's orphans, including those that
// double-forked, are reparented to us rather than to init, so they stay
// visible and must be reaped by StartReaper. It applies to the whole process.
func EnableSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return err
	}
	subreaper.Store(true)
	return nil
}

// subreaper is set once EnableSubreaper succeeded: from then on a run's
// processes are all descendants of this process. It is process-wide state,
// like the flag itself.
var subreaper atomic.Bool

// StartReaper reaps, until ctx is done, zombie children of this process that
// were not started by Run: orphans reparented to us as subreaper or as
// PID 1. A blind wait4(-1) would steal the exit status of Run's children, so
// it only collects zombies that are not in Run's registry and have stayed
// uncollected for half a second. Other code in this process that starts
// children must wait for them promptly. Call it once. The returned wait
// blocks until the reaper's goroutine has returned, after ctx is done.
func StartReaper(ctx context.Context) (wait func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, unix.SIGCHLD)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer signal.Stop(sigs)
		r := reaper{self: os.Getpid(), seen: map[zombie]time.Time{}}
		// Woken by SIGCHLD (coalesced signals are fine: a scan collects
		// every zombie), and by the timer only while zombies are settling:
		// an idle supervisor must not poll.
		recheck := time.NewTimer(zombieSettle)
		recheck.Stop()
		defer recheck.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-sigs:
			case <-recheck.C:
			}
			r.scan(time.Now())
			if len(r.seen) > 0 {
				recheck.Reset(zombieSettle)
			}
		}
	}()
	return func() { <-done }
}

// zombie identifies one zombie; the start time tells a reused pid apart.
type zombie struct {
	pid   int
	start uint64
}

type reaper struct {
	self int
	seen map[zombie]time.Time // unregistered zombie children, when first seen
}

// scan collects the zombie children that have settled and remembers the new
// ones. It returns how many it reaped.
func (r *reaper) scan(now time.Time) int {
	// Only orphans handed to us can be ours to reap (Run waits for the
	// rest): list them rather than every process of the machine, where
	// the kernel can.
	all, ok := orphans()
	if !ok {
		var err error
		if all, err = procfs.PIDs(); err != nil {
			return 0
		}
	}
	current := map[zombie]bool{}
	reaped := 0
	for _, pid := range all {
		st, err := procfs.ReadStat(pid)
		if err != nil || st.PPID != r.self || st.Alive() {
			continue
		}
		z := zombie{pid, st.Start}
		first, ok := r.seen[z]
		if !ok {
			first = now
			r.seen[z] = now
		}
		if now.Sub(first) >= zombieSettle && reapOrphan(pid) {
			reaped++
			continue
		}
		current[z] = true
	}
	for z := range r.seen {
		if !current[z] {
			delete(r.seen, z)
		}
	}
	return reaped
}

// reapOrphan collects pid unless Run owns it or may own it (a start not
// registered yet: the next scan retries).
func reapOrphan(pid int) bool {
	children.Lock()
	defer children.Unlock()
	if starting.Load() > 0 {
		return false
	}
	if _, ours := children.pids[pid]; ours {
		return false
	}
	var ws unix.WaitStatus
	got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
	return err == nil && got == pid
}
