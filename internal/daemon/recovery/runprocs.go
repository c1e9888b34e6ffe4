package recovery

import (
	"context"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/proc/cgroup"
)

// runProcs finds and ends the processes of a run that no process of
// cronvisor is the parent or keeper of: through its cgroup leaf when it
// has one (nothing of the run can leave it), else by its process group
// and its environment tag, which a process that cleared its environment
// and left the group escapes.
type runProcs struct {
	leaf *cgroup.Leaf // nil: by process group and tag
	pgid int          // the run's main process, 0 if unknown
	tag  []byte       // "CRONVISOR_RUN_ID=ID"
}

// maxScan paces the look for a run's end without a leaf to wait on:
// each look reads every process's environment, so a long run is looked
// at once a second, a run just signalled within milliseconds.
const maxScan = time.Second

// members lists the run's live processes.
func (p runProcs) members() []int {
	if p.leaf != nil {
		pids, _ := p.leaf.Procs()
		return pids
	}
	all, err := procfs.PIDs()
	if err != nil {
		return nil
	}
	var out []int
	for _, pid := range all {
		if p.isMember(pid) {
			out = append(out, pid)
		}
	}
	return out
}

func (p runProcs) isMember(pid int) bool {
	st, err := procfs.ReadStat(pid)
	if err != nil || !st.Alive() {
		return false
	}
	return (p.pgid > 0 && st.PGRP == p.pgid) || (len(p.tag) > 0 && procfs.HasEnv(pid, p.tag))
}

// alive reports whether a process of the run is left.
func (p runProcs) alive() bool {
	if p.leaf != nil {
		full, err := p.leaf.Populated()
		return err == nil && full
	}
	return len(p.members()) > 0
}

// signal sends sig to every process of the run; without a leaf through
// a pidfd, checking membership again, so that a pid reused since the
// scan is never signalled.
func (p runProcs) signal(sig unix.Signal) {
	if p.leaf != nil {
		if sig == unix.SIGKILL {
			_ = p.leaf.Kill() // also the processes forked meanwhile
			return
		}
		_ = p.leaf.Signal(sig)
		return
	}
	for _, pid := range p.members() {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue // gone
		}
		if p.isMember(pid) {
			_ = unix.PidfdSendSignal(fd, sig, nil, 0)
		}
		unix.Close(fd)
	}
}

// waitGone waits up to d for the run to be gone; false if it was not,
// or ctx ended first.
func (p runProcs) waitGone(ctx context.Context, d time.Duration) bool {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if p.leaf != nil {
		// A leaf that cannot be read any more was removed, which only
		// an empty one can be.
		return p.leaf.WaitEmpty(wctx) == nil || !p.alive()
	}
	for pause := 10 * time.Millisecond; p.alive(); pause = min(2*pause, maxScan) {
		t := time.NewTimer(pause)
		select {
		case <-wctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
	return true
}

// end ends the run as its supervisor would at its deadline: SIGTERM
// (and SIGCONT, for a stopped process) to every process of it, SIGKILL
// after grace; it returns once the run is gone, or false after a further
// leftoverWait.
func (p runProcs) end(ctx context.Context, grace time.Duration) bool {
	p.signal(unix.SIGTERM)
	p.signal(unix.SIGCONT)
	if p.waitGone(ctx, grace) {
		return true
	}
	p.signal(unix.SIGKILL)
	if p.leaf == nil {
		// A process forked between the scan and the signal: once more.
		defer p.signal(unix.SIGKILL)
	}
	return p.waitGone(ctx, leftoverWait)
}

// watchGone closes the channel once the run is gone; stop ends the
// watch and waits for its goroutine.
func (p runProcs) watchGone(ctx context.Context) (gone <-chan struct{}, stop func()) {
	c := make(chan struct{})
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if p.waitGone(wctx, time.Duration(1<<62)) {
			close(c)
		}
	}()
	return c, func() { cancel(); <-done }
}
