package proc

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/base/run"
	"cronvisor/internal/proc/cgroup"
)

// newLeaf creates the run's cgroup leaf when spec has a hierarchy, with
// spec.Limits written into it; nil without one. A leaf that cannot be
// made leaves the run to its process tree, as without a hierarchy,
// unless it has limits: a run whose limits cannot be applied does not
// start (its error says which limit and why).
func newLeaf(spec Spec) (*cgroup.Leaf, error) {
	if spec.Cgroup == nil {
		if err := cgroup.Check(nil, spec.Limits); err != nil {
			return nil, fmt.Errorf("limits: %w", err)
		}
		return nil, nil
	}
	l, err := spec.Cgroup.Create(leafName(spec.Tag), spec.Limits)
	if err != nil && !spec.Limits.IsZero() {
		return nil, fmt.Errorf("limits: %w", err)
	}
	if err != nil {
		return nil, nil // contained by process tree, as without cgroups
	}
	return l, nil
}

// leafName is "run-RUNID", from the run's tag; a run without one gets a
// name unique to this process and instant.
func leafName(tag string) string {
	if id := runIDOf(tag); id != "" {
		return "run-" + id
	}
	return "run-" + strconv.Itoa(procfs.Self()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// endLeaf ends what is left in the run's leaf, KillMode=control-group
// style: SIGTERM (and SIGCONT) to every process in it, cgroup.kill after
// grace, and returns once the leaf is empty, or ErrSurvivors after
// survivorWait. Nothing of the run can be outside the leaf: a process
// that cleared its environment, left the group and closed the lock is
// still in it.
func endLeaf(l *cgroup.Leaf, grace time.Duration) error {
	if full, err := l.Populated(); err == nil && !full {
		return nil
	}
	_ = l.Signal(unix.SIGTERM)
	_ = l.Signal(unix.SIGCONT) // a stopped process acts on SIGTERM only once continued
	if waitEmpty(l, grace) {
		return nil
	}
	_ = l.Kill()
	if waitEmpty(l, survivorWait) {
		return nil
	}
	pids, _ := l.Procs()
	return fmt.Errorf("%w: pids %v in %s", ErrSurvivors, pids, l.Path)
}

// waitEmpty waits up to d for l to be empty.
func waitEmpty(l *cgroup.Leaf, d time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return l.WaitEmpty(ctx) == nil
}

// concludeLeaf ends the run in its leaf, then what of it left the leaf,
// and waits for its main process to be reaped; then reads what the run
// cost and removes the leaf.
func concludeLeaf(l *cgroup.Leaf, t *tree, waited <-chan struct{}, grace time.Duration, res *Result, w warner) error {
	begun := time.Now()
	err := endLeaf(l, grace)
	if err == nil {
		// What left the leaf gets what is left of grace: the run's end
		// is no later for it.
		err = endEscapees(t, waited, max(grace-time.Since(begun), 0), w)
	}
	res.Usage = leafUsage(l)
	if err == nil {
		if rerr := l.Remove(); rerr != nil {
			w.say("the run's cgroup leaf is left behind", "cgroup", l.Path, "err", rerr)
		}
	}
	l.Close()
	return err
}

// endEscapees ends the processes of the run outside its leaf, which is
// empty by now: a root job can move itself, or a child, to any cgroup
// (echo $$ > /sys/fs/cgroup/cgroup.procs), and the leaf's emptiness does
// not make the run over. They are found as without a leaf, by process
// group, tag and lock, each is logged with where it went, and the run is
// over once they are gone and its main process is reaped.
func endEscapees(t *tree, waited <-chan struct{}, grace time.Duration, w warner) error {
	left := t.members()
	if len(left) == 0 {
		select {
		case <-waited: // only the reaping can be left
			return nil
		case <-time.After(survivorWait):
			return fmt.Errorf("%w: pid %d not reaped", ErrSurvivors, t.pgid)
		}
	}
	for _, pid := range left {
		w.say("a process of the run left its cgroup leaf; ending it by its process group and tag",
			"pid", pid, "moved_to", w.where(pid))
	}
	return t.end(waited, grace)
}

// warner passes on to Spec.Warn what the supervisor's log should say of a
// run's containment.
type warner struct {
	warn  func(msg string, args ...any) // nil: nothing is said
	mount string                        // the cgroup2 mount, "" if unknown
}

func newWarner(spec Spec) warner {
	w := warner{warn: spec.Warn}
	if spec.Cgroup != nil {
		w.mount = spec.Cgroup.Mount
	}
	return w
}

func (w warner) say(msg string, args ...any) {
	if w.warn != nil {
		w.warn(msg, args...)
	}
}

// where is the directory of the cgroup pid is in, or why it is unknown.
func (w warner) where(pid int) string {
	p, err := cgroup.Of(pid)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	if w.mount == "" {
		return p
	}
	return filepath.Join(w.mount, p)
}

// leafUsage is what the leaf's processes cost, Measured false if it
// cannot be read.
func leafUsage(l *cgroup.Leaf) run.Usage {
	u, err := l.Usage()
	if err != nil {
		return run.Usage{}
	}
	return run.Usage{Measured: true, CPUUser: u.CPUUser, CPUSystem: u.CPUSystem, MemoryPeak: u.MemoryPeak, OOMKilled: u.OOMKilled}
}
