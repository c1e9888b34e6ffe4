package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestE2EDaemonAsPID1 runs the daemon as PID 1 of a new pid namespace, as
// in a container: a job double-forks an orphan that escapes its run's
// process group (no tag, own session, no lock fd), so that it is
// reparented to PID 1 (and, where the run has a cgroup leaf, killed with
// the run's end); the daemon reaps it when it exits (no zombie left),
// and SIGTERM to PID 1 drains and exits 0. (The job waits a moment after
// the fork: until the orphan has dropped its tag and group, the run's end
// still finds it and ends it, as it should.) The namespace ends with its
// PID 1, so nothing of it outlives the test.
func TestE2EDaemonAsPID1(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Fatal("unshare (util-linux) is needed: apt-get install util-linux")
	}
	orphanArg := sleepArg("1.2")
	s := newSandbox(t, fmt.Sprintf(`shutdown_grace: 10s
jobs:
  - name: orphan
    schedule: "@every 1s"
    command: "(env -i setsid sleep %s </dev/null >/dev/null 2>&1 3>&- &); sleep 0.3; echo forked"
    timeout: 30s
`, orphanArg))
	args := []string{"--pid", "--fork", "--mount-proc"}
	if os.Geteuid() != 0 {
		args = append([]string{"--user", "--map-root-user"}, args...)
	}
	u := s.startEnv(nil, unshare, append(args, cvBin, "--config", s.config, "daemon", "--log-format", "json")...)
	waitFor(t, 10*time.Second, "daemon start", func() bool { return strings.Contains(u.stderr(), "cronvisor started") })
	if !strings.Contains(u.stderr(), `"pid":1}`) && !strings.Contains(u.stderr(), `"pid":1,`) {
		t.Fatalf("the daemon is not PID 1 of its namespace; stderr:\n%s", u.stderr())
	}
	init := childOf(t, u.pid())

	var orphan procInfo
	defer func() {
		if t.Failed() {
			t.Logf("daemon stderr:\n%s", u.stderr())
		}
	}()
	waitFor(t, 10*time.Second, "an orphan of the job", func() bool {
		for _, p := range withCmdline("sleep " + orphanArg) {
			if p.cmdline == "sleep "+orphanArg { // not the job's shell, whose command line has it too
				orphan = p
				return true
			}
		}
		return false
	})
	waitFor(t, 10*time.Second, "the orphan's run finished", func() bool { return strings.Contains(u.stderr(), `"msg":"run finished"`) })
	// Where runs are contained in a cgroup leaf of their own (as on the
	// development and CI machines), the orphan ends with its run
	// (cgroup.kill of what is left in the leaf) and is a zombie for its
	// new parent to reap; without a leaf it lives on for its second.
	// Either way its parent is now the daemon, PID 1, which must reap it.
	if ppid := parentOf(orphan.pid); ppid != 0 && ppid != init {
		t.Errorf("the orphan's parent is %d, want the daemon (%d): it was not reparented to PID 1", ppid, init)
	}
	waitFor(t, 10*time.Second, "the orphan reaped", func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", orphan.pid))
		return err != nil // a zombie would still have its /proc entry
	})

	_ = syscall.Kill(init, syscall.SIGTERM)
	if code := u.wait(30 * time.Second); code != 0 {
		t.Errorf("exit %d after SIGTERM to PID 1, want 0; stderr:\n%s", code, u.stderr())
	}
	if !strings.Contains(u.stderr(), "cronvisor stopped") {
		t.Errorf("no drain logged; stderr:\n%s", u.stderr())
	}
}

// childOf is the only child of pid (unshare --fork's: the namespace's
// PID 1 as this namespace numbers it).
func childOf(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(data))
	if len(f) != 1 {
		t.Fatalf("unshare has children %q, want one", f)
	}
	child, _ := strconv.Atoi(f[0])
	return child
}

// parentOf is pid's parent as this namespace numbers it, 0 if gone.
func parentOf(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
