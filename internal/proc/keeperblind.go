package proc

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/proc/cgroup"
)

// A supervisor can die between its run's exec and the "pid N" message
// that hands the keeper the run's pidfd: a job whose first instruction
// is `kill -9 $PPID` does it on purpose. The keeper is then not left
// blind: it finds the run's main process itself (learnMain), and when it
// cannot, it notices the run's end without a pidfd (watchGone), so that
// an end it did not see is recorded as unknown, never as a timeout, and
// a run without a deadline never keeps its lock for a dead supervisor.

// Bounds of the search for a main process that is still being started
// (forked but not yet exec'd: outside a leaf, its environment is not yet
// the run's).
const (
	findTries = 5
	findPause = 10 * time.Millisecond
)

// goneScan is how often a run watched without a pidfd and without a
// leaf is looked for in /proc: its lock is let go within that of its end.
const goneScan = 250 * time.Millisecond

// userHZ is the unit of /proc/PID/stat's start time (USER_HZ, 100 on
// every Linux ABI).
const userHZ = 100

// learnMain finds the run's main process when the supervisor died
// without saying its pid, and takes a pidfd of it: its exit, and its
// exit status (PIDFD_INFO_EXIT), are then watched as if the supervisor
// had sent it. Without one found, pid stays 0 and pidfd -1.
func (k *kept) learnMain() {
	for try := 0; try < findTries; try++ {
		pid, start, seen := k.findMain()
		k.seen = k.seen || seen
		if pid > 0 {
			fd, err := unix.PidfdOpen(pid, 0)
			if err != nil {
				return // gone since the scan: its end is unknown
			}
			// The pid may have been reused between the scan and the open.
			if st, err := procfs.ReadStat(pid); err != nil || st.Start != start {
				unix.Close(fd)
				return
			}
			k.pid, k.pidfd, k.started = pid, fd, startedAt(start)
			return
		}
		if seen {
			return // the run is there, its main process gone already
		}
		time.Sleep(findPause)
	}
}

// findMain is the run's main process: the run starts it with Setpgid,
// so it leads its own process group in its supervisor's session (the
// keeper's too: a group leader cannot leave it), and everything else of
// the run descends from it, so it started first. Its candidates are the
// processes of the run's leaf (-cgroup: the main process is started
// straight into it) or, without one, those the run's tag or lock
// finds. A descendant that made a session of its own is never taken
// for it, also once the main process is gone. seen says whether any
// process of the run was found.
func (k *kept) findMain() (pid int, start uint64, seen bool) {
	var leaders []int
	starts := map[int]uint64{}
	parents := map[int]int{}
	session, _ := unix.Getsid(0)
	for _, c := range k.candidates() {
		st, err := procfs.ReadStat(c)
		if err != nil {
			continue
		}
		seen = true
		if st.PGRP == c && sessionOf(c) == session {
			leaders = append(leaders, c)
			starts[c], parents[c] = st.Start, st.PPID
		}
	}
	for _, c := range leaders {
		_, parentLeads := starts[parents[c]]
		first := pid == 0 || starts[c] < start ||
			(starts[c] == start && !parentLeads) // a leader forked by another in the same tick
		if first {
			pid, start = c, starts[c]
		}
	}
	return pid, start, seen
}

// sessionOf is pid's session id (field 6 of its stat), -1 if unknown.
func sessionOf(pid int) int {
	b, err := procfs.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3
	if i < 0 || len(f) < 4 {
		return -1
	}
	sid, err := strconv.Atoi(f[3])
	if err != nil {
		return -1
	}
	return sid
}

// candidates lists the processes that may be the run's: its leaf's,
// zombies included (a main process that exited, its dead supervisor's
// orphan, and that nobody reaped yet: the kernel still has its exit
// status), or those of the machine that carry its tag or its lock.
func (k *kept) candidates() []int {
	if k.f.cgroup != "" {
		if l, err := cgroup.Open(k.f.cgroup); err == nil {
			pids, _ := l.Procs()
			return append(pids, zombiesIn(k.f.cgroup)...)
		}
	}
	t := k.scanTree()
	all, _ := procfs.PIDs()
	return t.membersAmong(all)
}

// zombiesIn lists the zombies whose cgroup was the leaf at path:
// cgroup.procs leaves them out, their /proc/PID/cgroup still names it.
func zombiesIn(path string) []int {
	all, _ := procfs.PIDs()
	var out []int
	for _, pid := range all {
		st, err := procfs.ReadStat(pid)
		if err != nil || st.State != 'Z' {
			continue
		}
		b, err := procfs.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(b)) {
			// The v2 line: the leaf's path below the hierarchy's mount.
			if rel, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok && rel != "/" && strings.HasSuffix(path, rel) {
				out = append(out, pid)
			}
		}
	}
	return out
}

// scanTree is the run's process tree as the keeper finds it: by its
// process group (once the main pid is known), tag and lock.
func (k *kept) scanTree() *tree {
	t := &tree{self: os.Getpid(), pgid: -1}
	if k.pid > 0 {
		t.pgid = k.pid
	}
	if k.f.tag != "" {
		t.tag = []byte(k.f.tag)
	}
	if k.files.lock >= 0 {
		t.lock = lockOf(k.files.lock)
	}
	return t
}

// startedAt is the wall-clock time of a /proc start time: the boot clock
// counts it, to the tick, where /proc/stat's btime is whole seconds.
func startedAt(ticks uint64) time.Time {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return procfs.Started(ticks)
	}
	up := time.Duration(ts.Nano())
	return time.Now().Add(time.Duration(ticks)*(time.Second/userHZ) - up)
}

// exitWatch is closed when the run's main process exited: its pidfd's,
// or, for a run the keeper holds no pidfd of, once nothing of the run
// is left (its leaf empty, or no process of it in /proc). stop ends the
// watch and waits for it.
func (k *kept) exitWatch() (exited <-chan struct{}, stop func()) {
	if k.pidfd >= 0 {
		return k.exited, func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	gone := make(chan struct{})
	wg.Go(func() {
		if k.watchGone(ctx) {
			close(gone)
		}
	})
	return gone, func() { cancel(); wg.Wait() }
}

// watchGone waits until nothing of the run is left, true, or ctx's end.
func (k *kept) watchGone(ctx context.Context) bool {
	if k.f.cgroup != "" {
		if l, err := cgroup.Open(k.f.cgroup); err == nil {
			if err := l.WaitEmpty(ctx); err == nil || ctx.Err() != nil {
				return err == nil
			}
		} // else no leaf to ask (removed): its processes, by /proc
	}
	t := k.scanTree()
	tick := time.NewTicker(goneScan)
	defer tick.Stop()
	for len(t.members()) > 0 {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}
