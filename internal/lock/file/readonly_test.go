package file

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/lock"

	"golang.org/x/sys/unix"
)

// TestRunDescriptorIsReadOnly: the descriptor a run inherits as fd 3 is
// open read-only (a job, one of another user above all, cannot rewrite the
// record through it), and it is the one that holds the lock: with the
// supervisor's descriptors closed, the run's process alone keeps the lock
// until it exits. The record and the file stay as the contract has them.
// Both ways to the lock: a file created by this acquisition, and one that
// exists already.
func TestRunDescriptorIsReadOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		exists bool
	}{
		{"new lock file", false},
		{"existing lock file", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			l := NewLocker(dir, locktest.InRun)
			if tc.exists {
				if err := acquire(t, l, "ro", "j", "run-0", locktest.SlotAt(0), true).Release(); err != nil {
					t.Fatal(err)
				}
			}
			g := acquire(t, l, "ro", "j", "run-1", locktest.SlotAt(1), true)
			checkReadOnly(t, g.File)
			checkRunHoldsReadOnly(t, l, g, filepath.Join(dir, "ro.lock"))
		})
	}
}

// checkReadOnly checks f's status flags (read-only, nothing else) and that
// a write through it fails with EBADF.
func checkReadOnly(t *testing.T, f *os.File) {
	t.Helper()
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if fl&unix.O_ACCMODE != unix.O_RDONLY || fl&unix.O_NONBLOCK != 0 {
		t.Errorf("lock.Grant.File status flags %#o, want O_RDONLY without O_NONBLOCK", fl)
	}
	if _, err := unix.Pwrite(int(f.Fd()), []byte("x"), 0); !errors.Is(err, unix.EBADF) {
		t.Errorf("pwrite through lock.Grant.File: %v, want EBADF", err)
	}
}

// checkRunHoldsReadOnly starts a run's process with g.File as fd 3, which
// tries to write through it, releases the lease (the supervisor's
// descriptors close), and checks that the process alone holds the lock
// and that the record is the supervisor's, untouched by the process.
func checkRunHoldsReadOnly(t *testing.T, l *Locker, g lock.Grant, path string) {
	t.Helper()
	ctx := locktest.Context(t, 10*time.Second)
	cmd := exec.CommandContext(ctx, "sh", "-c",
		`if echo rewritten >&3; then echo wrote; else echo refused; fi 2>/dev/null; exec sleep 30`)
	cmd.ExtraFiles = []*os.File{g.File}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locktest.KillGroup(cmd.Process.Pid); _ = cmd.Wait() })
	if err := g.SetPID(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "refused\n" {
		t.Fatalf("the run's `echo >&3` said %q, want refused", line)
	}
	if flags := fdinfoFlags(t, cmd.Process.Pid, 3); flags&unix.O_ACCMODE != unix.O_RDONLY {
		t.Errorf("the run's fd 3 has flags %#o, want O_RDONLY", flags)
	}
	if err := g.Release(); err != nil {
		t.Fatal(err)
	}
	if !heldElsewhere(t, path) {
		t.Fatal("with only the run's process holding fd 3, the lock is free")
	}
	rec, ok, _, err := readRecord(openRead(t, path))
	if err != nil || !ok || rec.RunID != "run-1" || rec.PID != cmd.Process.Pid || rec.InFlight {
		t.Errorf("record after Release = %+v, %v, %v; want run-1's, pid %d, not in flight", rec, ok, err, cmd.Process.Pid)
	}
	locktest.KillGroup(cmd.Process.Pid)
	_ = cmd.Wait()
	if heldElsewhere(t, path) {
		t.Error("the lock is still held after the run's process exited")
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the lock file after the run: %v, want it kept", err)
	}
}

// fdinfoFlags is the status flags of pid's descriptor fd, from
// /proc/PID/fdinfo/FD (octal).
func fdinfoFlags(t *testing.T, pid, fd int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
	}
	t.Fatalf("no flags in %s", b)
	return 0
}

// heldElsewhere reports whether `flock -n` (util-linux), another process
// with a descriptor of its own, finds the lock held.
func heldElsewhere(t *testing.T, path string) bool {
	t.Helper()
	err := exec.Command("flock", "-n", path, "true").Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return false
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return true
	}
	t.Fatalf("flock -n %s: %v", path, err)
	return false
}

func openRead(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
