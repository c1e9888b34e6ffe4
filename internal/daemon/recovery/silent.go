package recovery

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/proc"
	"cronvisor/internal/proc/cgroup"
)

// silence is an adopted run that an operator's kill (or a replacing fire)
// ended without its keeper.
type silence struct {
	keeper int    // the keeper that did not answer; 0: none lives
	via    string // "cgroup leaf", "process group", or "" (nothing found to signal)
	ended  bool   // nothing of the run is left
}

// maxSilent bounds the memory of such runs.
const maxSilent = 1024

// defaultKillGrace is the grace of a job Config.KillGrace does not know.
const defaultKillGrace = 10 * time.Second

// Silent reports whether adopted run runID was ended without its keeper
// (EndAdopted): the keeper that did not answer (0: none was alive), how
// the run was signalled ("cgroup leaf", "process group"; "" when nothing
// of it could be found), and whether nothing of it is left.
func (r *Recoverer) Silent(runID string) (keeper int, via string, ended, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.silent[runID]
	return s.keeper, s.via, s.ended, ok
}

// keepersOf lists the live keeper processes of o's supervisor on this
// state dir, as /proc shows them: none is asked, so a frozen one costs
// nothing here.
func (r *Recoverer) keepersOf(o orphan) []int {
	endDir := statedir.Dir(r.cfg.StateDir).Keepers()
	pids, _ := procfs.PIDs()
	var out []int
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			continue
		}
		k, ok := proc.ParseKeeper(strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"))
		if ok && k.Ends == endDir && (o.supervisor == 0 || k.SupervisorPID == o.supervisor) {
			out = append(out, pid)
		}
	}
	return out
}

// endWithoutKeeper ends o, whose keeper did not answer (keeper, a pid) or
// is gone (0), as its keeper would have: SIGTERM to what its cgroup leaf
// holds (else its process group), SIGKILL after the job's kill_grace. It
// returns at once; a goroutine of the Recoverer sees it to the end. Its
// record comes as for any adopted run: once its lock is let go.
func (r *Recoverer) endWithoutKeeper(o orphan, keeper int) {
	leaf := r.leafOf(o.runID)
	if o.pid <= 0 {
		if row, found, err := r.cfg.Store.Record(r.ctx, o.runID); err == nil && found {
			o.pid = row.PID
		}
	}
	s := silence{keeper: keeper}
	switch {
	case leaf != nil:
		s.via = "cgroup leaf"
	case o.pid > 0:
		s.via = "process group"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.silent == nil || len(r.silent) >= maxSilent {
		r.silent = map[string]silence{}
	}
	r.silent[o.runID] = s
	if r.closed || s.via == "" {
		return
	}
	grace := r.killGrace(o.job)
	r.wg.Go(func() {
		var gone bool
		if leaf != nil {
			gone = endThroughLeaf(r.ctx, leaf, grace)
		} else {
			gone = endThroughGroup(r.ctx, o.pid, grace)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if cur, ok := r.silent[o.runID]; ok {
			cur.ended = gone
			r.silent[o.runID] = cur
		}
	})
}

// leafOf opens run runID's cgroup leaf, nil if it has none.
func (r *Recoverer) leafOf(runID string) *cgroup.Leaf {
	if r.cfg.Cgroup == nil {
		return nil
	}
	l, err := cgroup.Open(filepath.Join(r.cfg.Cgroup.Root, "run-"+runID))
	if err != nil {
		return nil
	}
	return l
}

func (r *Recoverer) killGrace(job string) time.Duration {
	if r.cfg.KillGrace == nil {
		return defaultKillGrace
	}
	return r.cfg.KillGrace(job)
}

// endThroughLeaf signals what l holds, SIGKILL (cgroup.kill) after
// grace, and reports whether it is empty by then.
func endThroughLeaf(ctx context.Context, l *cgroup.Leaf, grace time.Duration) bool {
	defer l.Close()
	_ = l.Signal(unix.SIGTERM)
	_ = l.Signal(unix.SIGCONT) // a stopped process acts on SIGTERM only once continued
	gctx, stop := context.WithTimeout(ctx, grace)
	defer stop()
	if l.WaitEmpty(gctx) == nil {
		return true
	}
	_ = l.Kill()
	wctx, cancel := context.WithTimeout(ctx, leftoverWait)
	defer cancel()
	return l.WaitEmpty(wctx) == nil
}

// endThroughGroup does the same to process group pgid.
func endThroughGroup(ctx context.Context, pgid int, grace time.Duration) bool {
	_ = unix.Kill(-pgid, unix.SIGTERM)
	_ = unix.Kill(-pgid, unix.SIGCONT)
	empty := func() bool { return unix.Kill(-pgid, 0) == unix.ESRCH }
	if waitUntil(ctx, grace, empty) {
		return true
	}
	_ = unix.Kill(-pgid, unix.SIGKILL)
	return waitUntil(ctx, leftoverWait, empty)
}

// waitUntil polls done every 50 ms for at most d; the kernel gives no
// event for a process group's end, and the wait is one kill's.
func waitUntil(ctx context.Context, d time.Duration, done func() bool) bool {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	end := time.After(d)
	for !done() {
		select {
		case <-ctx.Done():
			return false
		case <-end:
			return done()
		case <-t.C:
		}
	}
	return true
}
