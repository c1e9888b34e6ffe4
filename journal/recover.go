package journal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"cronvisor/history"
	"cronvisor/lock"
)

// Recover closes the runs a dead supervisor left open on this host as
// "interrupted". A run whose processes still hold its lock stays open
// (running, orphaned) until the lock frees; call Recover again later.
// lockOf maps a job to its lock name. Rows of other hosts and of live
// supervisors are left alone. It returns how many rows it closed.
func Recover(ctx context.Context, store *history.Store, locker lock.Locker, lockOf func(job string) string, now time.Time) (int, error) {
	open, err := store.OpenRuns(ctx)
	if err != nil {
		return 0, err
	}
	host, _ := os.Hostname()
	closed := 0
	var errs []error
	for _, r := range open {
		if r.Host != host || supervisorAlive(r.SupervisorPID) {
			continue
		}
		if st, err := locker.Inspect(ctx, lockOf(r.Job)); err == nil && st.Held && st.Holder.RunID == r.RunID {
			continue // its processes survive and hold the lock: still running
		}
		r.Outcome = history.OutcomeInterrupted
		r.EndedAt = now
		r.ExitCode = nil
		r.Reason = fmt.Sprintf("supervisor (pid %d on %s) died during the run; exit status unknown", r.SupervisorPID, r.Host)
		if err := store.Finish(ctx, r); err != nil {
			errs = append(errs, err)
			continue
		}
		closed++
	}
	return closed, errors.Join(errs...)
}

// supervisorAlive tells whether pid is a live cronvisor process. A reused
// pid running something else counts as dead.
func supervisorAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	return strings.Contains(string(cmd), "cronvisor") || strings.Contains(string(cmd), ".test")
}
