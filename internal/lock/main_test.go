package lock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/base/run"
)

// helperEnv makes the test binary act as a supervisor process instead of
// running tests (see runHelper).
const helperEnv = "LOCK_TEST_HELPER"

// TestMain also makes the test process a child subreaper, so that
// processes orphaned by killing a helper are re-parented here and can be
// reaped with wait4 instead of polled for.
func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		if err := runHelper(mode, os.Getenv("LOCK_TEST_DIR")); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "PR_SET_CHILD_SUBREAPER:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.Exit(code)
}

// runHelper plays a supervisor: it takes lock "survivor" for run "run-1",
// starts the run's process with the lock file as fd 3, prints the pid of
// the process expected to outlive it, and waits to be killed (or for stdin
// to close). mode "child": the run is `sleep`; mode "grandchild": the run
// is a shell that leaves a background `sleep` behind and exits; mode
// "released": as grandchild, and then the supervisor releases its lease as
// it does when a run's main process has exited; mode "forks": the run is a
// shell (the pid printed) that, a second later, leaves a background
// `sleep` behind, writes its pid to DIR/bg.pid and exits.
func runHelper(mode, dir string) error {
	lease, err := NewFileLocker(dir, inRun).Acquire(context.Background(), Request{
		Name:      "survivor",
		Record:    Record{Holder: run.Holder{Job: "j", RunID: "run-1"}, Slot: slotAt(1)},
		CheckSlot: true,
	})
	if err != nil {
		return err
	}
	var cmd *exec.Cmd
	switch mode {
	case "child":
		cmd = exec.Command("sleep", "30")
	case "grandchild", "released":
		cmd = exec.Command("sh", "-c", "sleep 30 </dev/null >/dev/null 2>&1 & echo $!")
	case "forks":
		cmd = exec.Command("sh", "-c", `sleep 1; sleep 30 </dev/null >/dev/null 2>&1 & echo $! >"$0/bg.pid"`, dir)
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	cmd.ExtraFiles = []*os.File{lease.File}
	cmd.Env = append(os.Environ(), "CRONVISOR_RUN_ID=run-1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // outlives a kill of our group
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := lease.SetPID(cmd.Process.Pid); err != nil {
		return err
	}
	survivor := cmd.Process.Pid
	if mode == "grandchild" || mode == "released" {
		if err := cmd.Wait(); err != nil {
			return err
		}
		if survivor, err = strconv.Atoi(strings.TrimSpace(out.String())); err != nil {
			return err
		}
	}
	if mode == "released" {
		if err := lease.Release(); err != nil {
			return err
		}
	}
	fmt.Println(survivor)
	_, err = io.Copy(io.Discard, os.Stdin)
	return err
}

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

// killAndReap SIGKILLs pid and reaps it; it must be our child, directly or
// adopted through the subreaper. Errors mean it is already gone.
func killAndReap(pid int) {
	_ = unix.Kill(pid, unix.SIGKILL)
	var ws unix.WaitStatus
	_, _ = unix.Wait4(pid, &ws, 0, nil)
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
