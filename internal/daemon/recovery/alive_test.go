package recovery

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/harness/testlog"
)

// TestSupervisors checks the liveness of real processes: this test binary
// (a supervisor for the purpose: Supervisors knows its own executable), a
// process that is not cronvisor, a zombie and a pid nobody has.
func TestSupervisors(t *testing.T) {
	t.Parallel()
	self, err := procfs.Lookup(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = zombie.Wait() })
	waitZombie(t, zombie.Process.Pid)

	alive := Supervisors()
	tests := []struct {
		name  string
		pid   int
		since time.Time
		want  bool
	}{
		{"this binary, any time", os.Getpid(), time.Time{}, true},
		{"this binary, for a run since its start", os.Getpid(), self.Started.Add(time.Second), true},
		{"this binary, for a record from before its start: a reused pid", os.Getpid(), self.Started.Add(-time.Hour), false},
		{"not cronvisor", sleeper.Process.Pid, time.Time{}, false},
		{"a zombie", zombie.Process.Pid, time.Time{}, false},
		{"no such pid", deadPID, time.Time{}, false},
		{"no pid", 0, time.Time{}, false},
	}
	for _, tc := range tests {
		if got := alive(tc.pid, tc.since); got != tc.want {
			t.Errorf("%s: alive(%d, %v) = %v, want %v", tc.name, tc.pid, tc.since, got, tc.want)
		}
	}
}

// waitZombie waits until pid, a child that exits at once, has exited.
func waitZombie(t *testing.T, pid int) {
	t.Helper()
	testlog.Eventually(t, 5*time.Second, "pid "+itoa(pid)+" exited", func() bool {
		_, err := procfs.Lookup(pid)
		return err != nil
	})
}
