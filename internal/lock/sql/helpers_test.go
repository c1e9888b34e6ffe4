package sql

import (
	"fmt"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/base/run"
)

// TestMain stops the package's database servers (sqlServers) after the
// tests, and makes the test process a child subreaper as lock's tests do,
// so that processes orphaned by a kill are re-parented here.
func TestMain(m *testing.M) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "PR_SET_CHILD_SUBREAPER:", err)
		os.Exit(1)
	}
	code := m.Run()
	sqlServers.close()
	os.Exit(code)
}

// slotAt is a fixed slot: minute m of a reference hour (as lock's tests).
func slotAt(m int) time.Time {
	return time.Date(2025, 3, 30, 1, m, 0, 0, time.UTC)
}

// inRun is the predicate the daemon gives its locker (runner.InRun): a
// process of run runID carries its tag in its environment.
func inRun(pid int, runID string) bool { return procfs.HasEnv(pid, []byte(run.Tag(runID))) }
