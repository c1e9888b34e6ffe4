package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// TestE2EContainmentEndsTheEscapee is issue 28's first "done when": a job
// forks a child that clears its environment (env -i), closes fd 3 (the
// lock), calls setsid, ignores SIGTERM and sleeps 60 s. The run's timeout
// is 2 s: it is recorded timeout, its lock stays held while the escapee
// lives (through kill_grace), and once the run is over no process of it is
// left: the cgroup leaf found and killed what nothing else could.
func TestE2EContainmentEndsTheEscapee(t *testing.T) {
	fullSuiteOnly(t)
	arg := sleepArg("60.7")
	s, p, held, start := startEscape(t, arg, "2s", `trap "" TERM; `)
	if esc := escapees(arg)[0]; strings.Contains(strings.Join(esc.environ, "\n"), "CRONVISOR") {
		t.Fatalf("the escapee kept the run's environment: %q", esc.environ)
	}
	// Past the timeout, inside kill_grace: the main shell is gone, the
	// escapee ignores SIGTERM and still holds the run open, and its lock.
	time.Sleep(time.Until(start.Add(3 * time.Second)))
	if len(escapees(arg)) != 1 || !held() {
		t.Fatalf("3 s in (timeout 2 s, kill_grace 2 s): escapee alive %v, lock held %v; want both",
			escapees(arg), held())
	}
	p.wait(15 * time.Second)
	ended := time.Now()
	t.Logf("run over %v after its start (timeout 2s + kill_grace 2s)", ended.Sub(start).Round(time.Millisecond))
	time.Sleep(time.Until(ended.Add(time.Second)))
	if left := withCmdline("sleep " + arg); len(left) > 0 {
		t.Fatalf("1 s after the run's end, its processes are left: %v", left)
	}
	if held() {
		t.Fatal("the lock is still held after the run's end")
	}
	recs := s.historyJSON("--job", "escape")
	if len(recs) != 1 || recs[0].Outcome != run.Timeout {
		t.Fatalf("history %+v, want one timeout", recs)
	}
}

// TestE2EContainmentInForce: the daemon says at start-up, and `status`
// below its table, which containment is in force: a cgroup v2 leaf per run
// where the hierarchy is usable, the process tree where it is not (here a
// mount namespace without the cgroup2 mount), and runs run in both.
func TestE2EContainmentInForce(t *testing.T) {
	fullSuiteOnly(t)
	for _, tc := range []struct {
		name   string
		umount bool
		want   string
	}{
		{name: "cgroup v2", want: "containment: cgroup v2 at "},
		{name: "no cgroup2 mount", umount: true, want: "containment: process tree (cgroup v2 not usable: no cgroup2 file system mounted)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSandbox(t, `jobs:
  - {name: tick, schedule: "* * * * * *", command: "true", timeout: 10s}
`)
			var d *proc
			if tc.umount {
				script := fmt.Sprintf("umount %s && exec '%s' --config '%s' daemon --log-format json", cgroup2Mount(t), cvBin, s.config)
				d = s.startEnv(nil, "unshare", "-m", "sh", "-c", script)
				waitFor(t, 10*time.Second, "daemon start", func() bool { return strings.Contains(d.stderr(), "cronvisor started") })
			} else {
				d = s.startDaemon()
			}
			// Said just after "cronvisor started", which is what the start waits for.
			waitFor(t, 5*time.Second, fmt.Sprintf("the daemon's log to say %q", tc.want), func() bool {
				return strings.Contains(d.stderr(), tc.want)
			})
			waitFor(t, 10*time.Second, "a run of tick", func() bool {
				recs := s.historyJSON("--job", "tick")
				return len(recs) > 0 && recs[0].Outcome == run.OK
			})
			if _, stderr := s.statusRow("tick"); !strings.Contains(stderr, tc.want) {
				t.Errorf("status says %q, want %q", stderr, tc.want)
			}
			stopDaemons(t, d)
		})
	}
}

// escapees are the live processes that exec'd `sleep arg` (not the
// shells that will).
func escapees(arg string) []procInfo {
	var out []procInfo
	for _, p := range withCmdline(arg) {
		if p.cmdline == "sleep "+arg {
			out = append(out, p)
		}
	}
	return out
}

// cgroup2Mount is where this host mounts cgroup v2.
func cgroup2Mount(t *testing.T) string {
	out, err := exec.Command("findmnt", "-n", "-t", "cgroup2", "-o", "TARGET").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("no cgroup2 mount on this host (findmnt: %v)", err)
	}
	return strings.Fields(string(out))[0]
}

// TestE2EContainmentEndsTheEscapeeAtItsDeadline is the same escape with
// an escapee that does not ignore SIGTERM, as the issue states it: the
// SIGTERM to every process of the leaf at the 2 s deadline ends it then,
// not kill_grace (10 s) later, and the lock is held until it is gone.
func TestE2EContainmentEndsTheEscapeeAtItsDeadline(t *testing.T) {
	fullSuiteOnly(t)
	arg := sleepArg("60.8")
	s, p, held, start := startEscape(t, arg, "10s", "")
	time.Sleep(time.Until(start.Add(1500 * time.Millisecond)))
	if !held() {
		t.Fatal("1.5 s in, before the deadline: the lock is free, want held")
	}
	p.wait(15 * time.Second)
	ended := time.Now()
	took := ended.Sub(start)
	t.Logf("run over %v after its start (timeout 2s)", took.Round(time.Millisecond))
	if took > 3500*time.Millisecond {
		t.Errorf("run over %v after its start, want at its 2 s deadline (under 3.5 s with cronvisor's own start)", took)
	}
	time.Sleep(time.Until(ended.Add(time.Second)))
	if left := withCmdline("sleep " + arg); len(left) > 0 {
		t.Fatalf("1 s after the run's end, its processes are left: %v", left)
	}
	if held() {
		t.Fatal("the lock is still held after the run's end")
	}
	if recs := s.historyJSON("--job", "escape"); len(recs) != 1 || recs[0].Outcome != run.Timeout {
		t.Fatalf("history %+v, want one timeout", recs)
	}
}

// TestE2ELeftoversOfADeadRunAreEnded: a run's supervisor and keeper are
// both SIGKILLed, so nothing watches its deadline; its main process exits
// later, letting go of the lock, while a descendant that closed fd 3 and
// called setsid lives on in the run's cgroup leaf. The next daemon records
// the run interrupted and ends that descendant through the leaf: a run
// ending leaves nothing behind.
func TestE2ELeftoversOfADeadRunAreEnded(t *testing.T) {
	fullSuiteOnly(t)
	arg, mainArg := sleepArg("61.9"), sleepArg("31.9")
	job := func(schedule string) string {
		return `jobs:
  - name: escape
    schedule: "` + schedule + `"
    timeout: 60s
    command: |
      setsid env -i sh -c 'exec 3>&-; exec sleep ` + arg + `' </dev/null >/dev/null 2>&1 &
      exec sleep ` + mainArg + `
`
	}
	s := newSandbox(t, job("* * * * * *"))
	t.Cleanup(func() { killCmdline(arg); killCmdline(mainArg) })
	runID, _ := s.killDaemonInto(300 * time.Millisecond)
	if n := s.killKeepers(); n != 1 {
		t.Fatalf("killed %d keepers, want 1", n)
	}
	waitFor(t, 5*time.Second, "the escapee started", func() bool { return len(escapees(arg)) == 1 })
	// The next daemon must not fire the job again: only recovery acts.
	if err := os.WriteFile(s.config, []byte("state_dir: state\n"+job("@yearly")), 0o644); err != nil {
		t.Fatal(err)
	}
	d := s.startDaemon()
	killCmdline(mainArg) // the run's main process exits: the lock is free
	r := s.recordOf(runID, 10*time.Second)
	if r.Outcome != run.Interrupted {
		t.Errorf("run recorded %s (%q), want interrupted", r.Outcome, r.Reason)
	}
	waitFor(t, 3*time.Second, "the escapee ended through the run's leaf", func() bool { return len(escapees(arg)) == 0 })
	// The line follows the leaf's emptying, which the escapee's end precedes.
	const ended = "ended what was left of a dead supervisor's run in its cgroup"
	deadline := time.Now().Add(2 * time.Second)
	for !strings.Contains(d.stderr(), ended) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(d.stderr(), ended) {
		t.Errorf("the daemon's log does not say it ended the run's leftovers:\n%s", tail(d.stderr(), 20))
	}
	stopDaemons(t, d)
}

// startEscape runs (`cronvisor run`) a job whose timeout is 2s and whose
// command forks an escapee (env -i, fd 3 closed, setsid, then pre, then
// sleep arg) and sleeps 60 s itself, and waits for the escapee. held
// tells whether the job's lock is held (flock -n fails).
func startEscape(t *testing.T, arg, killGrace, pre string) (s *sandbox, p *proc, held func() bool, start time.Time) {
	t.Helper()
	s = newSandbox(t, `jobs:
  - name: escape
    schedule: "@yearly"
    timeout: 2s
    kill_grace: `+killGrace+`
    command: |
      setsid env -i sh -c '`+pre+`exec 3>&-; exec sleep `+arg+`' </dev/null >/dev/null 2>&1 &
      sleep 60
`)
	t.Cleanup(func() { killCmdline(arg) })
	lockFile := filepath.Join(s.state, "locks", "escape.lock")
	held = func() bool { return exec.Command("flock", "-n", lockFile, "true").Run() != nil }
	start = time.Now()
	p = s.cv("run", "escape")
	waitFor(t, 5*time.Second, "the escapee started", func() bool { return len(escapees(arg)) == 1 })
	return s, p, held, start
}
