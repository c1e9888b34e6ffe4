package e2e

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/ctl"
)

var numRE = regexp.MustCompile(`(\d+)`)

// statusRow runs `cronvisor status` and returns job's row and stderr.
func (s *sandbox) statusRow(job string) (row, stderr string) {
	s.t.Helper()
	code, stdout, stderr := s.runCV(10*time.Second, "status")
	if code != 0 {
		s.t.Fatalf("status: exit %d; stderr %q", code, stderr)
	}
	for _, l := range lines(stdout) {
		if strings.HasPrefix(l, job+" ") {
			return l, stderr
		}
	}
	s.t.Fatalf("status has no row for %s:\n%s", job, stdout)
	return "", ""
}

// TestE2EStatusOffline: without a daemon nothing schedules, and status
// says so; LAST START is the last run's, not the skip after it.
func TestE2EStatusOffline(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, `jobs:
  - name: once
    schedule: "@hourly"
    command: "true"
    timeout: 5s
`)
	if code, _, stderr := s.runCV(10*time.Second, "run", "once"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	lockFile := filepath.Join(s.state, "locks", "once.lock")
	holder := s.startEnv(nil, "flock", "-n", lockFile, "sleep", "30")
	waitFor(t, 10*time.Second, "flock(1) holding the lock", func() bool { return s.locksJSON("once").Held })
	if code, _, stderr := s.runCV(10*time.Second, "run", "once"); code != 0 || !strings.Contains(stderr, "skip") {
		t.Fatalf("run under a held lock: exit %d, stderr %q; want a skip", code, stderr)
	}
	_ = syscall.Kill(-holder.pid(), syscall.SIGKILL)
	holder.wait(10 * time.Second)

	recs := s.historyJSON("--job", "once")
	if len(recs) != 2 || recs[0].Outcome != "skipped" || recs[1].Outcome != "ok" {
		t.Fatalf("history %+v, want a skip after an ok run", recs)
	}
	row, stderr := s.statusRow("once")
	wantStart := recs[1].StartedAt.Local().Format("2006-01-02 15:04:05")
	for _, want := range []string{"not scheduled (no daemon)", "skipped", wantStart} {
		if !strings.Contains(row, want) {
			t.Errorf("status row %q lacks %q", row, want)
		}
	}
	if strings.Contains(row, " in ") || !strings.Contains(stderr, "no daemon running") {
		t.Errorf("status row %q (stderr %q) promises a next run without a daemon", row, stderr)
	}
}

// TestE2EPauseSurvivesRestart: a pause is kept in the state dir with who
// paused; a restarted daemon keeps the job paused, and status shows it
// with and without a daemon.
func TestE2EPauseSurvivesRestart(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	s := newSandbox(t, `jobs:
  - name: p1
    schedule: "@every 1s"
    command: echo run >> runs.txt
    timeout: 5s
`)
	d := s.startDaemon()
	if err := s.client().Pause(context.Background(), "p1"); err != nil {
		t.Fatal(err)
	}
	stopDaemons(t, d)
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	if row, _ := s.statusRow("p1"); !strings.Contains(row, "paused by "+me.Username+" since ") {
		t.Errorf("offline status row %q, want paused by %s", row, me.Username)
	}

	d = s.startDaemon()
	before := len(lines(readFile(t, filepath.Join(s.dir, "runs.txt"))))
	time.Sleep(2500 * time.Millisecond) // two fires of @every 1s, each skipped as paused
	if after := len(lines(readFile(t, filepath.Join(s.dir, "runs.txt")))); after != before {
		t.Errorf("the restarted daemon ran the paused job %d times", after-before)
	}
	jobs, err := s.client().Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p := jobs[0].PausedBy; jobs[0].State != ctl.StatePaused || p == nil || p.PID != os.Getpid() || p.User != me.Username {
		t.Errorf("after restart: state %s paused by %+v, want paused by this test (pid %d, %s)", jobs[0].State, p, os.Getpid(), me.Username)
	}
	if row, stderr := s.statusRow("p1"); !strings.Contains(row, "paused by "+me.Username) || !strings.Contains(stderr, "from the daemon") {
		t.Errorf("status row %q (%q), want paused by %s from the daemon", row, stderr, me.Username)
	}
	stopDaemons(t, d)
}

// TestConsoleRunNowAndDrain drives `cronvisor ui` against a daemon: r on
// an idle job starts a run; r again, while it runs, says the fire was
// skipped and who holds the lock. Then SIGTERM: the console and status
// see the drain ("shutting down: 1 run finishing") until the run ends.
func TestConsoleRunNowAndDrain(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	s := newSandbox(t, `shutdown_grace: 30s
jobs:
  - name: slow
    schedule: "@yearly"
    command: sleep 12
    timeout: 30s
`)
	d := s.startDaemon()
	tm := startTmux(t, s, 120, 30, cvBin, "--config", s.config, "ui")
	tm.await(10*time.Second, "the jobs table", func(sc string) bool { return strings.Contains(sc, "slow") })
	tm.keys("r")
	tm.await(10*time.Second, "the run started", func(sc string) bool {
		return strings.Contains(sc, "started run ") && runningPIDRE.MatchString(sc)
	})
	tm.keys("r")
	screen := tm.await(10*time.Second, "the skip reported", func(sc string) bool {
		return strings.Contains(sc, "slow not started: skipped, lock held by pid")
	})
	t.Logf("after r on a running job:\n%s", screen)

	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	tm.await(10*time.Second, "the drain shown", func(sc string) bool {
		return strings.Contains(sc, "daemon shutting down: 1 run finishing")
	})
	if _, stderr := s.statusRow("slow"); !strings.Contains(stderr, "shutting down: 1 run finishing") {
		t.Errorf("status during the drain says %q, want shutting down: 1 run finishing", stderr)
	}
	if code := d.wait(30 * time.Second); code != 0 {
		t.Errorf("daemon exit %d", code)
	}
	if recs := s.historyJSON("--job", "slow", "--outcome", "ok"); len(recs) != 1 {
		t.Errorf("history %+v, want the run finished ok during the drain", recs)
	}
	tm.await(10*time.Second, "the console losing the daemon", func(sc string) bool {
		return strings.Contains(sc, "daemon unreachable")
	})
	tm.keys("q")
	waitFor(t, 10*time.Second, "the console to exit", tm.dead)
}

// TestConsoleLostDaemonShowsStateDir: a console whose daemon was killed
// does not go on showing its run as live: it says it is not live, and
// shows what the state dir says (the run ended, its lock is free); it
// reconnects when a daemon is back.
func TestConsoleLostDaemonShowsStateDir(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	s := newSandbox(t, `jobs:
  - name: quick
    schedule: "@yearly"
    command: sleep 3
    timeout: 30s
`)
	d := s.startDaemon()
	tm := startTmux(t, s, 120, 30, cvBin, "--config", s.config, "ui")
	tm.await(10*time.Second, "the jobs table", func(sc string) bool { return strings.Contains(sc, "quick") })
	tm.keys("r")
	tm.await(10*time.Second, "the run", func(sc string) bool { return runningPIDRE.MatchString(sc) })
	_ = syscall.Kill(d.pid(), syscall.SIGKILL)
	d.wait(10 * time.Second)

	screen := tm.await(20*time.Second, "the state dir's reading, with the run over", func(sc string) bool {
		row := lineWith(sc, "quick ")
		return strings.Contains(sc, "daemon unreachable") && strings.Contains(sc, "read from the state dir at") &&
			strings.Contains(row, "· idle") // the state cell: the lock is free (its record still says running)
	})
	t.Logf("without its daemon:\n%s", screen)

	d = s.startDaemon()
	tm.await(30*time.Second, "the console reconnected", func(sc string) bool {
		return !strings.Contains(sc, "unreachable") && !strings.Contains(sc, "state dir at")
	})
	stopDaemons(t, d)
	tm.keys("q")
	waitFor(t, 10*time.Second, "the console to exit", tm.dead)
}

// TestConsoleRefusedReloadStays: a broken jobs.yaml is refused; the
// console lists every problem until the file is fixed, well past the
// status line's few seconds.
func TestConsoleRefusedReloadStays(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	good := `jobs:
  - name: a
    schedule: "@yearly"
    command: "true"
    timeout: 5s
`
	s := newSandbox(t, good)
	d := s.startDaemon()
	tm := startTmux(t, s, 100, 30, cvBin, "--config", s.config, "ui")
	tm.await(10*time.Second, "the jobs table", func(sc string) bool { return strings.Contains(sc, "1 job") })
	broken := "state_dir: state\n" + strings.Replace(good, "timeout: 5s", "timeout: 5x\n    colour: red", 1)
	if err := os.WriteFile(s.config, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	both := func(sc string) bool {
		return strings.Contains(sc, "jobs.yaml refused") && strings.Contains(sc, "jobs.yaml:6:14:") && strings.Contains(sc, "jobs.yaml:7:5:")
	}
	tm.await(15*time.Second, "both problems", both)
	time.Sleep(8 * time.Second) // longer than a status message stays
	if sc := tm.screen(); !both(sc) {
		t.Errorf("8 s later the problems are gone:\n%s", sc)
	}
	if err := os.WriteFile(s.config, []byte("state_dir: state\n"+good), 0o644); err != nil {
		t.Fatal(err)
	}
	tm.await(15*time.Second, "the banner gone after a good reload", func(sc string) bool {
		return !strings.Contains(sc, "refused") && strings.Contains(sc, "1 job")
	})
	stopDaemons(t, d)
	tm.keys("q")
	waitFor(t, 10*time.Second, "the console to exit", tm.dead)
}

// TestConsoleHangUpQuits: closing the terminal of `cronvisor` with an
// in-process scheduler (SIGHUP) ends it like a confirmed quit: the
// process exits, its run is ended and recorded, no socket is served.
func TestConsoleHangUpQuits(t *testing.T) {
	fullSuiteOnly(t)
	arg := sleepArg("37.3")
	s := newSandbox(t, `jobs:
  - name: long
    schedule: "@every 1s"
    command: sleep `+arg+`
    timeout: 60s
    kill_grace: 1s
`)
	tm := startTmux(t, s, 100, 30, cvBin, "--config", s.config)
	tm.await(10*time.Second, "the job running", func(sc string) bool { return runningPIDRE.MatchString(sc) })
	out, err := tm.run("display-message", "-p", "-t", "cv", "#{pane_pid}")
	if err != nil {
		t.Fatalf("tmux display-message: %v: %s", err, out)
	}
	pid := firstInt(numRE, out)
	if _, err := tm.run("kill-session", "-t", "cv"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "cronvisor to exit", func() bool { return isZombie(pid) })
	waitFor(t, 10*time.Second, "the job's processes to end", func() bool { return len(withCmdline(arg)) == 0 })
	if _, stderr := s.statusRow("long"); !strings.Contains(stderr, "no daemon running") {
		t.Errorf("status after the hang-up: %q, want no daemon", stderr)
	}
	recs := s.historyJSON("--job", "long", "--outcome", "interrupted")
	if len(recs) != 1 {
		t.Fatalf("history %+v, want the run interrupted by the hang-up", recs)
	}
	t.Logf("the run's record: %s: %s", recs[0].Outcome, recs[0].Reason)
}

// TestConsoleLogIsCapped: an embedded console's cronvisor.log is rotated
// at its cap (10 MiB), one old file kept. The log starts just under the
// cap, so the console's first records rotate it.
func TestConsoleLogIsCapped(t *testing.T) {
	s := newSandbox(t, `jobs:
  - name: idle
    schedule: "@yearly"
    command: "true"
    timeout: 5s
`)
	if err := os.MkdirAll(s.state, 0o700); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(s.state, "cronvisor.log")
	const capBytes = 10 << 20
	old := []byte(strings.Repeat(strings.Repeat("x", 99)+"\n", (capBytes-100)/100))
	if err := os.WriteFile(logPath, old, 0o600); err != nil {
		t.Fatal(err)
	}
	tm := startTmux(t, s, 100, 30, cvBin, "--config", s.config)
	tm.await(10*time.Second, "the console", func(sc string) bool { return strings.Contains(sc, "1 job") })
	tm.keys("q")
	waitFor(t, 10*time.Second, "the console to exit", tm.dead)

	rotated, err := os.ReadFile(logPath + ".1")
	if err != nil {
		t.Fatalf("no rotated log: %v", err)
	}
	if len(rotated) > capBytes || !strings.HasPrefix(string(rotated), string(old)) {
		t.Errorf("cronvisor.log.1 is %d bytes, want the old log (%d bytes) and at most the cap", len(rotated), len(old))
	}
	cur := readFile(t, logPath)
	if len(cur) > capBytes || !strings.Contains(cur, "cronvisor st") {
		t.Errorf("cronvisor.log is %d bytes without the console's records: %.200q", len(cur), cur)
	}
}
