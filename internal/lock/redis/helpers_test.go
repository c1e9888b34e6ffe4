package redis

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
)

// The helpers below are lock's test helpers (lock/main_test.go) that the
// Redis tests share.

// slotAt is a fixed slot: minute m of a reference hour.
func slotAt(m int) time.Time {
	return time.Date(2025, 3, 30, 1, m, 0, 0, time.UTC)
}

// testCtx bounds a test that starts processes.
func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// readLine reads one line from r, giving up when ctx ends.
func readLine(ctx context.Context, r io.Reader) (string, error) {
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

// killGroup SIGKILLs a process group; ESRCH (already gone) is fine.
func killGroup(pgid int) {
	if err := unix.Kill(-pgid, unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
		fmt.Fprintln(os.Stderr, "kill group:", err)
	}
}

// waitUntil polls cond every few milliseconds until it holds or ctx ends;
// it is for waiting on another process, never on this one.
func waitUntil(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting until %s", what)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// inRun is the predicate the daemon gives its locker (runner.InRun): a
// process of run runID carries its tag in its environment.
func inRun(pid int, runID string) bool { return procfs.HasEnv(pid, []byte(run.Tag(runID))) }
