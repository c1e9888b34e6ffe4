package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// A run's leaf may not stay a leaf: a root job can make cgroups under it
// (mkdir $LEAF/sub) and move its processes there. The kernel's own view
// of the leaf covers them (cgroup.kill kills the whole subtree,
// cgroup.events' populated counts descendants, cpu.stat and memory.peak
// sum them), but cgroup.procs lists the leaf's own processes only, and
// rmdir refuses a cgroup with children (EBUSY). What follows reads and
// removes the leaf as the subtree it is.

// subtree lists dir and every cgroup below it, each after its children:
// the order in which rmdir can remove them.
func subtree(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	var errs []error
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		sub, err := subtree(filepath.Join(dir, e.Name()))
		out = append(out, sub...)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return append(out, dir), errors.Join(errs...)
}

// subtreeProcs is the pids of the processes of dir and of every cgroup
// below it.
func subtreeProcs(dir string) ([]int, error) {
	dirs, err := subtree(dir)
	var out []int
	errs := []error{err}
	for _, d := range dirs {
		pids, err := readProcs(d)
		out = append(out, pids...)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// removeSubtree removes the empty cgroup dir, and first every cgroup
// below it, deepest first. A cgroup already gone is no error; one that
// cannot be removed is named in the error, beside why.
func removeSubtree(dir string) error {
	// rmdir(2) alone: os.Remove tries unlink(2) first, which a directory
	// always refuses.
	err := unix.Rmdir(dir)
	if err == nil || err == unix.ENOENT {
		return nil
	}
	if err != unix.EBUSY && err != unix.ENOTEMPTY {
		return &os.PathError{Op: "rmdir", Path: dir, Err: err}
	}
	// Children (a job's sub-cgroups) keep it: remove them, then it.
	dirs, serr := subtree(dir)
	var errs []error
	for _, d := range dirs {
		if err := unix.Rmdir(d); err != nil && err != unix.ENOENT {
			errs = append(errs, &os.PathError{Op: "rmdir", Path: d, Err: err})
		}
	}
	if len(errs) > 0 && serr != nil {
		errs = append(errs, serr)
	}
	return errors.Join(errs...)
}

// Of is the cgroup pid is in, as the cgroup v2 line of /proc/PID/cgroup
// names it ("/" for the root, "/cronvisor/run-ID" for a run's leaf):
// where a process that left its run's leaf went.
func Of(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return "", err
	}
	p, ok := ownCgroup(string(b))
	if !ok {
		return "", fmt.Errorf("/proc/%d/cgroup: no 0:: line", pid)
	}
	return p, nil
}
