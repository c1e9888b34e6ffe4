package proc

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"cronvisor/cgroup"
	"cronvisor/procfs"
	"cronvisor/run"

	"golang.org/x/sys/unix"
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

// concludeLeaf ends the run in its leaf and waits for its main process to
// be reaped, then reads what the run cost and removes the leaf.
func concludeLeaf(l *cgroup.Leaf, waited <-chan struct{}, grace time.Duration, res *Result) error {
	err := endLeaf(l, grace)
	if err == nil {
		select {
		case <-waited: // the leaf is empty: only the reaping can be left
		case <-time.After(survivorWait):
			err = fmt.Errorf("%w: pid %d not reaped", ErrSurvivors, res.PID)
		}
	}
	res.Usage = leafUsage(l)
	if err == nil {
		_ = l.Remove()
	}
	l.Close()
	return err
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
