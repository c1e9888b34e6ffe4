package proc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/harness/testlog"
)

// sessionTag marks every process any test of this package starts, so
// TestMain can find and kill whatever a failing test left behind.
var sessionTag = "PROCTEST_SESSION=" + strconv.Itoa(os.Getpid())

var runSeq atomic.Int64

func TestMain(m *testing.M) {
	// This binary is also the guard of guarded runs, and the supervisor
	// that the guard tests kill.
	if IsKeeper(os.Args) {
		os.Exit(KeeperMain(os.Args[1:], nil))
	}
	if IsSetup(os.Args) { // the exec shim of runs with a Setup
		os.Exit(SetupMain(os.Args[1:]))
	}
	if script := os.Getenv(supervisorEnv); script != "" {
		os.Exit(guardedSupervisor(script))
	}
	// Subreaper is per process: without it orphans go to init and the
	// reaper tests have nothing to reap.
	if err := EnableSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "EnableSubreaper:", err)
		os.Exit(1)
	}
	code := m.Run()
	processKeepers.Close() // the tests' runs are over: nothing is left for it
	// A dead supervisor's keeper exits just after its last run is over:
	// a moment, not a leak.
	var left []int
	testlog.Poll(2*time.Second, func() bool { left = tagged(sessionTag); return len(left) == 0 })
	if len(left) > 0 {
		fmt.Fprintf(os.Stderr, "processes left behind by the tests: %v\n", left)
		for _, pid := range left {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			fmt.Fprintf(os.Stderr, "%d: %q\n", pid, b)
		}
		for _, pid := range left {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		code = 1
	}
	os.Exit(code)
}

// tagged lists live processes whose environment holds entry.
func tagged(entry string) []int {
	all, _ := procfs.PIDs()
	var out []int
	for _, pid := range all {
		if st, err := procfs.ReadStat(pid); err == nil && st.Alive() && procfs.HasEnv(pid, []byte(entry)) {
			out = append(out, pid)
		}
	}
	return out
}

// testSpec returns a shell run with a tag unique to this run, and makes sure
// that, whatever the test does, nothing tagged survives it.
func testSpec(t *testing.T, script string) Spec {
	t.Helper()
	tag := fmt.Sprintf("CRONVISOR_RUN_ID=test-%d-%d", os.Getpid(), runSeq.Add(1))
	t.Cleanup(func() {
		if left := tagged(tag); len(left) > 0 {
			t.Errorf("processes of the run survived: %v", left)
			for _, pid := range left {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
	})
	return Spec{
		Argv:      []string{"/bin/sh", "-c", script},
		Env:       append(os.Environ(), sessionTag, tag),
		Tag:       tag,
		KillGrace: 2 * time.Second,
		OnStart: func(pid int) {
			t.Cleanup(func() { _ = unix.Kill(-pid, unix.SIGKILL) })
		},
	}
}

// startOutside starts a helper process outside Run (in its own process
// group, killed at cleanup).
func startOutside(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Env = append(cmd.Env, sessionTag)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
		_ = cmd.Wait()
	})
}

// recorder collects the lines of OnOutput calls, and the calls.
type recorder struct {
	mu    sync.Mutex
	lines map[string][]string
	calls int
}

func (r *recorder) onOutput(stream, lines string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lines == nil {
		r.lines = map[string][]string{}
	}
	r.lines[stream] = append(r.lines[stream], strings.Split(lines, "\n")...)
	r.calls++
}

func (r *recorder) get(stream string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lines[stream])
}

// within bounds a test's context.
func within(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// gone reports whether pid no longer exists or is a zombie.
func gone(pid int) bool {
	st, err := procfs.ReadStat(pid)
	return err != nil || !st.Alive()
}

// readPID reads a pid a test script wrote to path, waiting until it is there.
func readPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	ok := testlog.Poll(2*time.Second, func() bool {
		b, _ := os.ReadFile(path)
		var err error
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	if !ok {
		t.Fatalf("no pid in %s", path)
	}
	return pid
}
