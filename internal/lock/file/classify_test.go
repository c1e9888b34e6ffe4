package file

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/harness/testlog"
	"cronvisor/internal/lock"
)

// TestFlockToolRespectsOurLock: `flock -n` on the file fails while a
// lease is held and succeeds after Release.
func TestFlockToolRespectsOurLock(t *testing.T) {
	t.Parallel()
	ctx := locktest.Context(t, 10*time.Second)
	dir := t.TempDir()
	l := NewLocker(dir, locktest.InRun)
	lease := acquire(t, l, "x", "j", "r", locktest.SlotAt(1), true)
	// After the release, -w: a job forked meanwhile by a parallel test may
	// hold a copy of the descriptor until it has exec'd.
	flockRun := func(wait string) int {
		cmd := exec.CommandContext(ctx, "flock", wait, "-E", "75", filepath.Join(dir, "x.lock"), "true")
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode()
	}
	if code := flockRun("-n"); code != 75 {
		t.Errorf("flock(1) while held: exit %d, want 75 (conflict)", code)
	}
	if err := lease.Release(); err != nil {
		t.Fatal(err)
	}
	if code := flockRun("-w5"); code != 0 {
		t.Errorf("flock(1) after release: exit %d, want 0", code)
	}
}

// TestForeignHolder: a lock taken by `flock -n FILE sleep 30` is reported
// as foreign with flock's pid and command line, and the record is left
// alone; likewise when flock is killed and only its child keeps the file.
func TestForeignHolder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		killFlock  bool // leave only flock's child, sleep, holding the file
		wantInArgs string
	}{
		{"flock alive", false, "flock -w"},
		{"only flock's child left", true, "sleep 30"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := locktest.Context(t, 15*time.Second)
			dir := t.TempDir()
			l := NewLocker(dir, locktest.InRun)
			path := filepath.Join(dir, "x.lock")
			if err := acquire(t, l, "x", "j", "run-old", locktest.SlotAt(1), true).Release(); err != nil {
				t.Fatal(err)
			}
			before := mustRead(t, path)

			fl := startFlock(t, l, path)
			wantPID := fl.cmd.Process.Pid
			if tt.killFlock {
				wantPID = onlyChild(t, fl.cmd.Process.Pid)
				t.Cleanup(func() { locktest.KillAndReap(wantPID) })
				if err := fl.cmd.Process.Kill(); err != nil {
					t.Fatal(err)
				}
				_ = fl.cmd.Wait()
			}

			_, err := l.Acquire(ctx, lock.Request{Name: "x", Record: lock.Record{Holder: run.Holder{Job: "j", RunID: "run-new"}, Slot: locktest.SlotAt(2)}, CheckSlot: true})
			var held *lock.HeldError
			if !errors.As(err, &held) {
				t.Fatalf("Acquire: got %v, want *lock.HeldError", err)
			}
			h := held.Record
			if !h.Foreign || h.PID != wantPID || !strings.Contains(h.Cmdline, tt.wantInArgs) || h.Since.IsZero() {
				t.Errorf("holder %+v, want foreign pid %d running %q with a start time", h, wantPID, tt.wantInArgs)
			}
			if !strings.Contains(err.Error(), strconv.Itoa(wantPID)) {
				t.Errorf("message %q does not name pid %d", err, wantPID)
			}
			if after := mustRead(t, path); string(after) != string(before) {
				t.Errorf("record of a foreign-held lock was written: %q", after)
			}
		})
	}
}

// flockHolder is a running `flock -w 5 PATH sleep 30`.
type flockHolder struct {
	cmd  *exec.Cmd
	drop func() // kill it
}

// startFlock starts flock(1) on path and waits until Inspect reports it
// as the lock's foreign holder. -w rather than -n: a job forked meanwhile
// by a parallel test may briefly hold a copy of a released descriptor.
func startFlock(t *testing.T, l *Locker, path string) flockHolder {
	t.Helper()
	ctx := locktest.Context(t, 10*time.Second)
	cmd := exec.CommandContext(ctx, "flock", "-w", "5", path, "sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	drop := func() { once.Do(func() { locktest.KillGroup(cmd.Process.Pid); _ = cmd.Wait() }) }
	t.Cleanup(drop)
	name := strings.TrimSuffix(filepath.Base(path), ".lock")
	locktest.WaitUntil(ctx, t, "flock(1) holds the lock", func() bool {
		st, err := l.Inspect(ctx, name)
		return err == nil && st.Held && st.Record.Foreign && st.Record.PID == cmd.Process.Pid
	})
	return flockHolder{cmd: cmd, drop: drop}
}

// onlyChild returns the pid of the single child of pid, waiting up to
// 5 s for it: flock(1) takes the lock before it forks its command, so
// the lock can be seen held while flock has no child yet.
func onlyChild(t *testing.T, pid int) int {
	t.Helper()
	p := strconv.Itoa(pid)
	var data []byte
	testlog.Poll(5*time.Second, func() bool {
		var err error
		if data, err = os.ReadFile(filepath.Join("/proc", p, "task", p, "children")); err != nil {
			t.Fatal(err)
		}
		return len(strings.TrimSpace(string(data))) > 0
	})
	child, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("children of %d after 5 s: %q", pid, data)
	}
	return child
}

// TestLockSurvivesSupervisor: a supervisor (a helper process) takes the
// lock and starts its run with the lock file as fd 3; after the supervisor
// is SIGKILLed the lock stays held, and is reported as cronvisor's, until
// the run's last process is gone, also when the supervisor released its
// lease before dying.
func TestLockSurvivesSupervisor(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"child", "grandchild", "released"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			ctx := locktest.Context(t, 20*time.Second)
			dir := t.TempDir()
			survivor, helper := startHelper(ctx, t, mode, dir)
			l := NewLocker(dir, locktest.InRun)
			st, err := l.Inspect(ctx, "survivor")
			if err != nil || !st.Held || st.Record.Foreign || st.Record.SupervisorPID != helper.Process.Pid {
				t.Fatalf("before the kill: %+v, %v; want held by the helper", st, err)
			}

			if err := helper.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = helper.Wait()
			_, err = l.Acquire(ctx, lock.Request{Name: "survivor", Record: lock.Record{Holder: run.Holder{Job: "j", RunID: "run-2"}}})
			var held *lock.HeldError
			if !errors.As(err, &held) || held.Record.Foreign || held.Record.RunID != "run-1" {
				t.Fatalf("after the supervisor died: got %v (%+v); want held by run-1", err, held)
			}

			locktest.KillAndReap(survivor)
			lease, err := l.Acquire(ctx, lock.Request{Name: "survivor", Record: lock.Record{Holder: run.Holder{Job: "j", RunID: "run-2"}}})
			if err != nil {
				t.Fatalf("after the survivor exited: %v", err)
			}
			if err := lease.Release(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// startHelper starts the test binary as a supervisor (runHelper) and
// returns the pid of the run's process that should outlive it.
func startHelper(ctx context.Context, t *testing.T, mode, dir string) (int, *exec.Cmd) {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "LOCK_TEST_DIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); locktest.KillGroup(cmd.Process.Pid); _ = cmd.Wait() })
	line, err := locktest.ReadLine(ctx, stdout)
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	pid, err := strconv.Atoi(line)
	if err != nil {
		t.Fatalf("helper said %q", line)
	}
	// The run's processes are in their own group, which the helper's kill
	// does not reach; the survivor is adopted by this subreaper process.
	t.Cleanup(func() {
		if pgid, err := unix.Getpgid(pid); err == nil {
			locktest.KillGroup(pgid)
		}
		locktest.KillAndReap(pid)
	})
	return pid, cmd
}

// TestClassify drives each rule of classify with a real process holding
// the lock file open, and made-up /proc/locks entries and records.
func TestClassify(t *testing.T) {
	t.Parallel()
	ctx := locktest.Context(t, 10*time.Second)
	dir := t.TempDir()
	l := NewLocker(dir, locktest.InRun)
	if err := acquire(t, l, "x", "j", "r", locktest.SlotAt(1), true).Release(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "x.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id, err := regularID(f)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "sleep", "30")
	cmd.ExtraFiles = []*os.File{f}
	cmd.Env = append(os.Environ(), "CRONVISOR_RUN_ID=run-1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locktest.KillGroup(cmd.Process.Pid); _ = cmd.Wait() })
	opener, self := cmd.Process.Pid, os.Getpid()
	const gone = 1 << 22 // pids stay below PID_MAX_LIMIT (1<<22): no such process

	rec := lock.Record{Holder: run.Holder{PID: gone, RunID: "run-1", Job: "j"}, SupervisorPID: gone + 1}
	other := lock.Record{Holder: run.Holder{PID: gone, RunID: "run-other", Job: "j"}, SupervisorPID: gone + 1}
	tests := []struct {
		name        string
		rec         lock.Record
		haveRec     bool
		lockers     []int
		id          procfs.FileID
		wantForeign bool
		wantPID     int
	}{
		{"locker is the record's supervisor", rec, true, []int{gone + 1}, id, false, gone},
		{"locker is the record's run", other, true, []int{gone}, id, false, gone},
		{"locker is this process, record not written yet", lock.Record{}, false, []int{self}, id, false, self},
		{"live locker outside the record", other, true, []int{opener}, id, true, opener},
		{"locker gone, opener carries the record's run id", rec, true, []int{0}, id, false, gone},
		{"locker hidden, opener carries the record's run id", rec, true, nil, id, false, gone},
		{"locker gone, unrelated opener", other, true, []int{0}, id, true, opener},
		{"nothing visible: trust the record", other, true, nil, procfs.FileID{Dev: 1, Ino: 1}, false, gone},
		{"nothing visible and no record", lock.Record{}, false, []int{gone}, procfs.FileID{Dev: 1, Ino: 1}, true, gone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var lockers []procfs.Lock
			for _, pid := range tt.lockers {
				lockers = append(lockers, procfs.Lock{PID: pid, Write: true})
			}
			got := l.classify(tt.rec, tt.haveRec, lockers, tt.id)
			if got.Foreign != tt.wantForeign || got.PID != tt.wantPID {
				t.Fatalf("got %+v, want foreign=%v pid %d", got, tt.wantForeign, tt.wantPID)
			}
			if got.Foreign && got.PID == opener && got.Cmdline != "sleep 30" {
				t.Errorf("cmdline %q, want %q", got.Cmdline, "sleep 30")
			}
		})
	}
}
