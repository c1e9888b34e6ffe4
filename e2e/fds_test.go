package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fdsScript lists the job's own shell's descriptors, one a line (ls is
// forked with the shell's stdout, so the shell itself opens nothing for
// it), says whether a write through fd 3 works, and then waits for the
// test's gate file, so that the test can look at the lock during the run.
const fdsScript = `ls -1 /proc/$$/fd; readlink /proc/$$/fd/3; ` +
	`if echo x >&3; then echo fd3=wrote; else echo fd3=refused; fi 2>/dev/null; ` +
	`i=0; while [ ! -e "$GATE" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done`

// TestE2EJobsStartClean: a daemon started by a shell that holds extra
// descriptors (fd 10 and 251, as an interactive bash leaves them) runs
// jobs whose own processes have exactly fds 0, 1, 2, 3 and 4, fd 3 being
// the lock file, open read-only, fd 4 the run's heartbeat pipe: neither a root job nor a `user:` job can
// write through it, and `cronvisor locks` shows the lock held by the run
// all the while. Then the same of `cronvisor run` from such a shell.
func TestE2EJobsStartClean(t *testing.T) {
	throwawayUser(t, "cvfds-user")
	gate := filepath.Join(os.TempDir(), "cvfds-gate-"+randHex(6))
	t.Cleanup(func() { os.Remove(gate) })
	s := newSandbox(t, `defaults:
  timeout: 60s
  dir: /
  env:
    GATE: `+gate+`
jobs:
  - name: as_root
    schedule: "0 0 1 1 *"
    command: '`+fdsScript+`'
  - name: as_user
    schedule: "0 0 1 1 *"
    user: cvfds-user
    command: '`+fdsScript+`'
`)
	d := s.startEnv(nil, "bash", "-c", `exec 10</dev/null 251</dev/null; exec "$0" --config "$1" daemon --log-format json`, cvBin, s.config)
	waitFor(t, 15*time.Second, "the daemon to start", func() bool { return strings.Contains(d.stderr(), "cronvisor started") })
	if fds := fdsOf(t, d.pid()); !slices.Contains(fds, 10) || !slices.Contains(fds, 251) {
		t.Fatalf("the daemon has fds %v: the shell's 10 and 251 did not reach it, the test proves nothing", fds)
	}
	for _, job := range []string{"as_root", "as_user"} {
		t.Run(job, func(t *testing.T) {
			lockFile := filepath.Join(s.state, "locks", job+".lock")
			if code, _, errOut := s.runCV(10*time.Second, "trigger", job); code != 0 {
				t.Fatalf("trigger %s: exit %d: %s", job, code, errOut)
			}
			waitFor(t, 10*time.Second, job+" to hold its lock", func() bool { return lockHeld(lockFile) })
			if row := s.locksJSON(job); !row.Held || row.Job != job || row.Foreign {
				t.Errorf("locks during the run: %+v, want held by %s, not foreign", row, job)
			}
			if err := os.WriteFile(gate, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(gate)
			waitFor(t, 20*time.Second, job+"'s run to end", func() bool { return ended(s, job) })
			checkCleanStart(t, s, job, lockFile)
			if lockHeld(lockFile) {
				t.Errorf("%s's lock is still held after its run", job)
			}
		})
	}
	stopDaemons(t, d)

	// `cronvisor run` from the same kind of shell, its output its job's.
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p := s.startEnv(nil, "bash", "-c", `exec 10</dev/null 251</dev/null; exec "$0" --config "$1" run as_root`, cvBin, s.config)
	if code := p.wait(20 * time.Second); code != 0 {
		t.Fatalf("run as_root: exit %d: %s", code, p.stderr())
	}
	want := []string{"0", "1", "2", "3", "4", filepath.Join(s.state, "locks", "as_root.lock"), "fd3=refused"}
	if got := lines(p.stdout()); !slices.Equal(got, want) {
		t.Errorf("cronvisor run: the job printed %q, want %q", got, want)
	}
}

// checkCleanStart reads the job's output (`logs`, whose lines say the
// stream they came from): fds 0-4 exactly, fd 3 the lock
// file, and the write through it refused (fd 4: the heartbeat pipe).
func checkCleanStart(t *testing.T, s *sandbox, job, lockFile string) {
	t.Helper()
	code, out, errOut := s.runCV(10*time.Second, "logs", job)
	if code != 0 {
		t.Fatalf("logs %s: exit %d: %s", job, code, errOut)
	}
	var got []string
	for _, l := range lines(out) {
		got = append(got, strings.TrimPrefix(l, "stdout | "))
	}
	want := []string{"0", "1", "2", "3", "4", lockFile, "fd3=refused"}
	if !slices.Equal(got, want) {
		t.Errorf("%s printed %q, want %q", job, got, want)
	}
}

// ended reports whether the newest run of job has its end recorded.
func ended(s *sandbox, job string) bool {
	for _, r := range s.historyJSON("--job", job) {
		if !r.StartedAt.IsZero() && !r.EndedAt.IsZero() {
			return true
		}
	}
	return false
}

// fdsOf lists pid's open descriptors.
func fdsOf(t *testing.T, pid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	var fds []int
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil {
			fds = append(fds, fd)
		}
	}
	return fds
}
