package proc

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/harness/testlog"
)

// isZombie reports whether pid is a zombie.
func isZombie(pid int) bool {
	st, err := procfs.ReadStat(pid)
	return err == nil && st.State == 'Z'
}

// vanished reports whether pid has left the process table (was reaped).
func vanished(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return os.IsNotExist(err)
}

// orphanZombie makes a grandchild that is reparented to the test process
// (a subreaper, see TestMain), kills it and returns its pid once it is a
// zombie waiting to be reaped.
func orphanZombie(t *testing.T) int {
	t.Helper()
	pid := startOrphan(t, "exec sleep 30", nil)
	if err := unix.Kill(pid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !testlog.Poll(2*time.Second, func() bool { return isZombie(pid) }) {
		t.Fatalf("orphan %d did not become our zombie", pid)
	}
	return pid
}

// TestReaper is not parallel: scanning with a made-up clock must not collect
// zombies that other tests' os/exec calls are about to wait for.
func TestReaper(t *testing.T) {
	self := os.Getpid()
	t.Run("orphan is reaped once settled", func(t *testing.T) {
		pid := orphanZombie(t)
		r := reaper{self: self, seen: map[zombie]time.Time{}}
		now := time.Now()
		r.scan(now)
		if !isZombie(pid) {
			t.Fatalf("reaped %d before it settled", pid)
		}
		r.scan(now.Add(zombieSettle))
		if !vanished(pid) {
			t.Errorf("orphan %d was not reaped", pid)
		}
	})
	t.Run("child of Run is left to its waiter", func(t *testing.T) {
		cmd := exec.Command("/bin/sh", "-c", "exit 7")
		cmd.Env = append(os.Environ(), sessionTag)
		if err := startRegistered(cmd); err != nil {
			t.Fatal(err)
		}
		pid := cmd.Process.Pid
		if !testlog.Poll(2*time.Second, func() bool { return isZombie(pid) }) {
			t.Fatalf("child %d did not exit", pid)
		}
		r := reaper{self: self, seen: map[zombie]time.Time{}}
		now := time.Now()
		r.scan(now)
		r.scan(now.Add(zombieSettle))
		err := cmd.Wait()
		unregister(pid)
		if code := cmd.ProcessState.ExitCode(); err == nil || code != 7 {
			t.Errorf("Wait: %v, exit code %d; want exit status 7", err, code)
		}
	})
	t.Run("StartReaper alongside runs", testReaperWithRuns)
}

// testReaperWithRuns runs jobs that leave orphans while the reaper runs: the
// orphans must be reaped and no run may lose its exit status to the reaper.
func testReaperWithRuns(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	StartReaper(ctx)
	const runs = 6
	results := make([]Result, runs)
	orphans := make([]int, runs)
	var wg sync.WaitGroup
	for i := range runs {
		spec := testSpec(t, "sleep 30 & echo $!; exit 3")
		spec.OnOutput = func(_, line string) { orphans[i], _ = strconv.Atoi(line) }
		wg.Go(func() { results[i] = Run(within(t, 5*time.Second), spec) })
	}
	wg.Wait()
	for i, res := range results {
		if res.Outcome != Exited || res.ExitCode != 3 || res.Err != nil {
			t.Errorf("run %d: got %+v, want exit 3", i, res)
		}
	}
	for _, pid := range orphans {
		if pid == 0 {
			t.Fatal("a run did not print its orphan's pid")
		}
		if !testlog.Poll(3*time.Second, func() bool { return vanished(pid) }) {
			t.Errorf("orphan %d was not reaped", pid)
		}
	}
}
