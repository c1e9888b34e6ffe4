// Package locktest holds what the tests of the lock backends (lock,
// lock/file, lock/redis, lock/sql) share: a fixed slot and a request, the
// run predicate the daemon gives its lockers, and the bounded waits and
// kills of tests that start processes. It imports package lock, so
// lock's own tests that use it are of package lock_test.
package locktest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/testlog"
	"cronvisor/internal/lock"
)

// SlotAt is a fixed slot: minute m of a reference hour.
func SlotAt(m int) time.Time {
	return time.Date(2025, 3, 30, 1, m, 0, 0, time.UTC)
}

// InRun is the predicate the daemon gives its locker (runner.InRun): a
// process of run runID carries its tag in its environment.
func InRun(pid int, runID string) bool { return procfs.HasEnv(pid, []byte(run.Tag(runID))) }

// Context bounds a test that starts processes: it ends after d, or with
// the test.
func Context(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// ReadLine reads one line from r, trimmed, giving up when ctx ends.
func ReadLine(ctx context.Context, r io.Reader) (string, error) {
	type result struct {
		s   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := bufio.NewReader(r).ReadString('\n')
		ch <- result{strings.TrimSpace(s), err}
	}()
	select {
	case res := <-ch:
		return res.s, res.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// WaitUntil is testlog.Eventually bounded by ctx's deadline rather than a
// duration: the lock tests bound each one by its context. It is for
// waiting on another process, never on this one.
func WaitUntil(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline, _ := ctx.Deadline() // none: cond is asked once
	testlog.Eventually(t, time.Until(deadline), what, cond)
}

// BecomeSubreaper makes the test process a child subreaper, so that
// processes orphaned by killing a helper are re-parented here and can be
// reaped with wait4 (KillAndReap) instead of polled for. TestMain calls
// it before m.Run; the process exits when the kernel refuses.
func BecomeSubreaper() {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "PR_SET_CHILD_SUBREAPER:", err)
		os.Exit(1)
	}
}

// KillAndReap SIGKILLs pid and reaps it; it must be our child, directly
// or adopted through the subreaper. Errors mean it is already gone.
func KillAndReap(pid int) {
	_ = unix.Kill(pid, unix.SIGKILL)
	var ws unix.WaitStatus
	_, _ = unix.Wait4(pid, &ws, 0, nil)
}

// KillGroup SIGKILLs a process group; ESRCH (already gone) is fine.
func KillGroup(pgid int) {
	if err := unix.Kill(-pgid, unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
		fmt.Fprintln(os.Stderr, "kill group:", err)
	}
}

// Request asks for lock "orders" as job on host; a non-zero slot makes it
// a scheduled fire (CheckSlot), a zero one a manual run.
func Request(job, runID, host string, slot time.Time) lock.Request {
	return lock.Request{
		Name:      "orders",
		Record:    lock.Record{Holder: run.Holder{Job: job, RunID: runID, Host: host}, Slot: slot},
		CheckSlot: !slot.IsZero(),
	}
}
