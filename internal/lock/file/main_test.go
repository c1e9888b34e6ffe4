package file

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/lock"
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
	locktest.BecomeSubreaper()
	code := m.Run()
	os.Exit(code)
}

// runHelper plays a supervisor: it takes lock "survivor" for run "run-1",
// starts the run's process with the lock file as fd 3, prints the pid of
// the process expected to outlive it, and waits to be killed (or for stdin
// to close). mode "child": the run is `sleep`; mode "grandchild": the run
// is a shell that leaves a background `sleep` behind and exits; mode
// "released": as grandchild, and then the supervisor releases its lease as
// it does when a run's main process has exited; mode "journal": as
// child, with the lock in DIR/locks and a cursor journal in DIR/cursors,
// printing once the record is durable; mode "forks": the run is a
// shell (the pid printed) that, a second later, leaves a background
// `sleep` behind, writes its pid to DIR/bg.pid and exits.
func runHelper(mode, dir string) error {
	locker := NewLocker(dir, locktest.InRun)
	if mode == "journal" {
		locker = NewLocker(filepath.Join(dir, "locks"), locktest.InRun, WithCursorJournal(filepath.Join(dir, "cursors")))
	}
	lease, err := locker.Acquire(context.Background(), lock.Request{
		Name:      "survivor",
		Record:    lock.Record{Holder: run.Holder{Job: "j", RunID: "run-1"}, Slot: locktest.SlotAt(1)},
		CheckSlot: true,
	})
	if err != nil {
		return err
	}
	var cmd *exec.Cmd
	switch mode {
	case "child", "journal":
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
	if mode == "journal" { // the record durable, as Release would wait for
		if err := <-lease.Lease.(*fileLease).synced; err != nil {
			return err
		}
	}
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
