package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/harness/testlog"
)

// lockFile opens a fresh file standing in for the run's lock file.
func lockFile(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "job.lock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// startOrphan runs script in the background of a shell that exits at
// once, with extra as its fd 3, and returns the pid of the orphan: the
// shape of a run's escapee, reparented to this process (the subreaper).
func startOrphan(t *testing.T, script string, extra *os.File) int {
	t.Helper()
	sh := exec.Command("/bin/sh", "-c", script+" >/dev/null 2>&1 & echo $!")
	sh.Env = append(os.Environ(), sessionTag)
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if extra != nil {
		sh.ExtraFiles = []*os.File{extra}
	}
	out, err := sh.Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = unix.Kill(pid, unix.SIGKILL)
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, 0, nil)
	})
	if !testlog.Poll(2*time.Second, func() bool { st, err := procfs.ReadStat(pid); return err == nil && st.PPID == os.Getpid() }) {
		t.Fatalf("%d was not reparented to this process", pid)
	}
	return pid
}

// TestTreeLockHolder checks that sharing the lock file's open file
// description makes a process a member, and opening the same file does not.
func TestTreeLockHolder(t *testing.T) {
	t.Parallel()
	f := lockFile(t)
	inherited := startOrphan(t, "exec /bin/sleep 30", f)
	opened := startOrphan(t, "exec /bin/sleep 30 3<"+f.Name(), nil)

	lock, err := newOpenFile(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := &tree{self: os.Getpid(), pgid: -1, lock: lock}
	tests := []struct {
		name string
		pid  int
		want bool
	}{
		{"inherited descriptor", inherited, true},
		{"same file opened separately", opened, false},
		{"the supervisor itself", os.Getpid(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tr.isMember(tt.pid); got != tt.want {
				t.Errorf("isMember(%d) = %v, want %v", tt.pid, got, tt.want)
			}
		})
	}
	if got, want := tr.members(), []int{inherited}; !slices.Equal(got, want) {
		t.Errorf("members() = %v, want %v", got, want)
	}
}

// TestRunFindsEscapees runs a job whose grandchild leaves the process group
// and clears its environment: it is found only through the lock file.
// Without the lock file it cannot be found; Run must then still return,
// after the drain window, rather than wait for the pipe it holds.
func TestRunFindsEscapees(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		withLock  bool
		wantEnded bool
	}{
		{"holder of the lock file is ended", true, true},
		{"unfindable escapee does not hold up the run", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "pid")
			script := strings.ReplaceAll(`setsid env -i /bin/sh -c 'echo $$ > PIDFILE; exec sleep 30' &
				while [ ! -s PIDFILE ]; do sleep 0.01; done; echo hi`, "PIDFILE", pidFile)
			spec := testSpec(t, script)
			var rec recorder
			spec.OnOutput = rec.onOutput
			var opened *exec.Cmd // the same file opened separately: must survive
			if tt.withLock {
				f := lockFile(t)
				spec.ExtraFiles = []*os.File{f}
				opened = exec.Command("/bin/sh", "-c", "exec /bin/sleep 30 3<"+f.Name())
				startOutside(t, opened)
			}
			start := time.Now()
			res := Run(within(t, 5*time.Second), spec)
			took := time.Since(start)
			escapee := readPID(t, pidFile)
			t.Cleanup(func() { _ = unix.Kill(escapee, unix.SIGKILL) })
			if res.Outcome != Exited || res.ExitCode != 0 || took > time.Second {
				t.Fatalf("got %+v after %v, want a prompt exit 0", res, took)
			}
			if got := rec.get("stdout"); !slices.Equal(got, []string{"hi"}) {
				t.Errorf("stdout %q, want [hi]", got)
			}
			if ended := gone(escapee); ended != tt.wantEnded {
				t.Errorf("escapee %d ended: %v, want %v", escapee, ended, tt.wantEnded)
			}
			if opened != nil && gone(opened.Process.Pid) {
				t.Errorf("a process that only opened the same file was ended")
			}
		})
	}
}

func TestDescendantsListsTheWholeTree(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// sh -> sh -> sleep: the grandchild must be found from this process.
	cmd := exec.CommandContext(ctx, "sh", "-c", "sh -c 'sleep 30' & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() }()
	var found []int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		kids, ok := procfs.Children(os.Getpid())
		if !ok {
			t.Fatal("this kernel cannot list children; the fallback scan is used")
		}
		d := subtrees(kids, nil)
		found = found[:0]
		for _, pid := range d {
			if st, err := procfs.ReadStat(pid); err == nil && st.PGRP == cmd.Process.Pid {
				found = append(found, pid)
			}
		}
		if len(found) == 3 {
			// Pruning the main process leaves out its whole subtree.
			pruned := subtrees(kids, func(pid int) bool { return pid == cmd.Process.Pid })
			for _, pid := range found {
				if slices.Contains(pruned, pid) {
					t.Errorf("pid %d of the pruned subtree %v was listed: %v", pid, found, pruned)
				}
			}
			return
		}
	}
	t.Fatalf("found %v in the run's group, want sh, sh and sleep", found)
}

// TestCandidatesLeaveOutWhatThisProcessStarted: a run's candidates leave
// out the other processes this one started, a keeper process among them
// (listing its threads' children, at every run's end, was a tenth of the
// supervisor's CPU at 1,000 runs a second), and keep the orphans handed
// to it, where an escaped process of a run ends up.
func TestCandidatesLeaveOutWhatThisProcessStarted(t *testing.T) {
	if !subreaper.Load() {
		t.Fatal("the tests run as a child subreaper, as the daemon does")
	}
	kp, err := startKeeperProc(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer kp.kill()
	out, err := exec.Command("/bin/sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("orphan pid %q: %v", out, err)
	}
	defer syscall.Kill(orphan, syscall.SIGKILL)
	run := &tree{self: os.Getpid(), pgid: 1 << 30}
	got := run.candidates()
	if slices.Contains(got, kp.cmd.Process.Pid) {
		t.Errorf("candidates %v list the keeper process %d", got, kp.cmd.Process.Pid)
	}
	if !slices.Contains(got, orphan) {
		t.Errorf("candidates %v leave out the orphan %d", got, orphan)
	}
}

// TestAReapedMainProcessIsNotLookedFor: once the run's main process has
// been waited for, its pid is not a root of the run's candidates, even
// if it names a child of this process again (a reused pid): only the
// orphans reparented here are. Before that, a live main process is one.
func TestAReapedMainProcessIsNotLookedFor(t *testing.T) {
	if !subreaper.Load() {
		t.Fatal("the tests run as a child subreaper, as the daemon does")
	}
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	pid := child.Process.Pid
	waited := make(chan struct{})
	run := &tree{self: os.Getpid(), pgid: pid, reaped: waited}
	if got := run.candidates(); !slices.Contains(got, pid) {
		t.Fatalf("candidates %v leave out the main process %d before it is reaped", got, pid)
	}
	close(waited)
	roots, ok := orphans()
	if !ok {
		t.Fatal("this process's children cannot be listed")
	}
	got := run.candidates()
	if slices.Contains(got, pid) != slices.Contains(roots, pid) {
		t.Fatalf("after the reaping, candidates %v hold %d as a root (this process's orphans: %v)", got, pid, roots)
	}
}
