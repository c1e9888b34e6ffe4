package e2e

// End-to-end tests of the real binary for guarded runs: each test writes a
// jobs.yaml into its own directory and runs cronvisor as separate processes,
// the way cron, an operator or a second supervisor would.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/harness/redistest"
)

func TestE2EConcurrentRunsOneWins(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	s := newSandbox(t, `jobs:
  - name: once
    schedule: "@hourly"
    command: echo $$ >> ran.txt; sleep 3
    timeout: 10s
`)
	ran := filepath.Join(s.dir, "ran.txt")
	var ps []*proc
	for range 10 {
		ps = append(ps, s.cv("run", "once"))
	}
	waitFor(t, 10*time.Second, "the winning run to start", func() bool { return readFile(t, ran) != "" })

	code, _, stderr := s.runCV(10*time.Second, "run", "--conflict-exit-code", "75", "once")
	if code != 75 {
		t.Errorf("--conflict-exit-code 75 while held: exit %d, want 75; stderr %q", code, stderr)
	}

	var winners, skipped []*proc
	for _, p := range ps {
		if code := p.wait(20 * time.Second); code != 0 {
			t.Errorf("cronvisor run (pid %d): exit %d, want 0; stderr %q", p.pid(), code, p.stderr())
		}
		if strings.Contains(p.stderr(), "skipped") {
			skipped = append(skipped, p)
		} else {
			winners = append(winners, p)
		}
	}
	ranLines := lines(readFile(t, ran))
	if len(ranLines) != 1 || len(winners) != 1 || len(skipped) != 9 {
		t.Fatalf("want exactly one run: %d line(s) in ran.txt %q, %d winner(s), %d skipped",
			len(ranLines), ranLines, len(winners), len(skipped))
	}
	jobPID, err := strconv.Atoi(ranLines[0])
	if err != nil {
		t.Fatalf("ran.txt: %v", err)
	}
	if got := winners[0].stderr(); got != "" {
		t.Errorf("winner's stderr: %q, want nothing", got)
	}
	// The record names the winning supervisor until the job has started.
	for _, p := range skipped {
		if pid := skipLine(t, p.stderr()); pid != jobPID && pid != winners[0].pid() {
			t.Errorf("skip names pid %d, want the job's %d or its supervisor's %d", pid, jobPID, winners[0].pid())
		}
	}
}

// TestE2EDaemonsShareSlots: three supervisors of the same jobs, each with
// its own state dir (one daemon per state dir) and sharing a Redis lock
// backend, run each slot once between them.
func TestE2EDaemonsShareSlots(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test: runs in the full suite")
	}
	t.Parallel()
	// tick fires at the same instant in every daemon. jittered starts each
	// daemon's fire at a different moment of the second, like supervisors
	// whose timers differ: a lock alone would let them run a slot one after
	// the other, only the slot cursor stops that. (A jitter is drawn from
	// the job's name and slot, the same on every host; each daemon's file
	// gives it a slightly different jitter, so that the draws differ.)
	srv := redistest.New(t)
	shared := t.TempDir() // every supervisor's runs write here
	jobs := `jobs:
  - name: tick
    schedule: "* * * * * *"
    command: echo "$CRONVISOR_SCHEDULED_AT $$" >> %[1]s/tick.txt; sleep 0.05
    timeout: 5s
  - name: jittered
    schedule: "* * * * * *"
    jitter: %[2]dms
    command: echo "$CRONVISOR_SCHEDULED_AT $$" >> %[1]s/jittered.txt; sleep 0.05
    timeout: 5s
`
	var ds []*proc
	for i := range 3 {
		ds = append(ds, redisSandbox(t, srv.URL(), fmt.Sprintf(jobs, shared, 600-i)).cv("daemon", "--log-format", "json"))
	}
	for _, d := range ds {
		waitFor(t, 10*time.Second, "daemon start", func() bool { return strings.Contains(d.stderr(), "cronvisor started") })
	}
	latestStart := time.Now() // no earlier than any daemon's start
	time.Sleep(10 * time.Second)
	earliestStop := time.Now()
	for _, d := range ds {
		if err := syscall.Kill(d.pid(), syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range ds {
		if code := d.wait(15 * time.Second); code != 0 {
			t.Errorf("daemon %d: exit %d after SIGTERM, want 0", d.pid(), code)
		}
		if took := d.exited.Sub(earliestStop); took > 5*time.Second {
			t.Errorf("daemon %d took %v to stop after SIGTERM", d.pid(), took)
		}
	}

	// A second of margin at each end, plus the second that was under way.
	first := latestStart.Truncate(time.Second).Add(2 * time.Second)
	last := earliestStop.Truncate(time.Second).Add(-time.Second)
	if last.Sub(first) < 5*time.Second {
		t.Fatalf("window %v..%v too short to judge", first, last)
	}
	window := int(last.Sub(first)/time.Second) + 1
	logs := daemonLogs(t, ds)
	for _, job := range []string{"tick", "jittered"} {
		t.Run(job, func(t *testing.T) {
			runs := checkSlots(t, filepath.Join(shared, job+".txt"), first, last)
			checkDaemonLogs(t, logs, job, runs, window)
		})
	}
}

func TestE2ETimeoutEndsTree(t *testing.T) {
	t.Parallel()
	// Each command records the pids of the sleeps it starts (so the test
	// knows they ran), with %[1]s and %[2]s their unique durations.
	cases := []struct {
		name    string
		command string
	}{
		{"background grandchildren", `sleep %[1]s & echo $! >> started; sleep %[2]s & echo $! >> started; wait`},
		{"setsid -f double fork", `setsid -f sh -c 'echo $$ >> started; exec sleep %[1]s'; sleep %[2]s`},
		{"setsid in background", `setsid sh -c 'echo $$ >> started; exec sleep %[1]s' & sleep %[2]s & wait`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, b := sleepArg("31.4"), sleepArg("31.5")
			s := newSandbox(t, fmt.Sprintf(`jobs:
  - name: tree
    schedule: "@hourly"
    timeout: 1s
    kill_grace: 1s
    command: |
      %s
`, fmt.Sprintf(tc.command, a, b)))
			p := s.cv("run", "tree")
			code := p.wait(15 * time.Second)
			if code != 124 {
				t.Errorf("exit %d, want 124; stderr %q", code, p.stderr())
			}
			if took := p.elapsed(); took < 900*time.Millisecond || took > 4*time.Second {
				t.Errorf("run took %v, want about the 1s timeout (at most ~3s with kill_grace)", took)
			}
			for _, arg := range []string{a, b} {
				if left := withCmdline(arg); len(left) > 0 {
					t.Errorf("after cronvisor run exited, still alive: pid %d %q", left[0].pid, left[0].cmdline)
				}
			}
			if n := len(lines(readFile(t, filepath.Join(s.dir, "started")))); n == 0 {
				t.Errorf("the job started no sleep: the test proves nothing")
			}
		})
	}
}

func TestE2ESupervisorKilledLockOutlivesIt(t *testing.T) {
	t.Parallel()
	arg := sleepArg("31.7")
	s := newSandbox(t, fmt.Sprintf(`jobs:
  - name: slow
    schedule: "@hourly"
    command: ["sleep", "%s"]
    timeout: 30s
    lock: slowlock
  - name: quick
    schedule: "@hourly"
    command: echo quick ran
    timeout: 5s
    lock: slowlock
`, arg))
	lockPath := filepath.Join(s.state, "locks", "slowlock.lock")
	sup := s.cv("run", "slow")
	var sleepPID int
	waitFor(t, 10*time.Second, "the job's sleep", func() bool {
		if ps := withCmdline(arg); len(ps) == 1 {
			sleepPID = ps[0].pid
		}
		return sleepPID != 0
	})
	t.Cleanup(func() { _ = syscall.Kill(sleepPID, syscall.SIGKILL) })
	waitFor(t, 5*time.Second, "the record to name the job's pid", func() bool { return recordPID(t, lockPath) == sleepPID })

	if err := syscall.Kill(sup.pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	sup.wait(5 * time.Second)
	if isZombie(sleepPID) {
		t.Fatalf("the job's sleep %d died with its supervisor; the test needs it to survive", sleepPID)
	}

	code, _, stderr := s.runCV(10*time.Second, "run", "slow")
	if code != 0 {
		t.Errorf("run slow while the survivor holds the lock: exit %d, want 0; stderr %q", code, stderr)
	}
	if pid := skipLine(t, stderr); pid != sleepPID && pid != sup.pid() {
		t.Errorf("skip names pid %d, want the survivor %d or the dead supervisor %d", pid, sleepPID, sup.pid())
	}
	if r := s.locksJSON("slowlock"); !r.Held || r.Foreign || r.Job != "slow" || (r.PID != sleepPID && r.PID != sup.pid()) {
		t.Errorf("locks --json: %+v, want held by job slow, pid %d", r, sleepPID)
	}
	if code, _, stderr := s.runCV(10*time.Second, "run", "--conflict-exit-code", "75", "quick"); code != 75 {
		t.Errorf("quick job sharing the lock, survivor alive: exit %d, want 75 (skipped); stderr %q", code, stderr)
	}

	if err := syscall.Kill(sleepPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the survivor to die", func() bool { return isZombie(sleepPID) })
	code, stdout, stderr := s.runCV(10*time.Second, "run", "--conflict-exit-code", "75", "quick")
	if code != 0 || strings.TrimSpace(stdout) != "quick ran" {
		t.Errorf("quick job after the survivor ended: exit %d, stdout %q, stderr %q; want it to run", code, stdout, stderr)
	}
}

func TestE2EForeignFlockHolder(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, `jobs:
  - name: ext
    schedule: "@hourly"
    command: echo ran >> ran.txt
    timeout: 5s
`)
	if err := os.MkdirAll(filepath.Join(s.state, "locks"), 0o700); err != nil {
		t.Fatal(err)
	}
	arg := sleepArg("30.9")
	holder := s.startEnv(nil, "/usr/bin/flock", "-n", filepath.Join(s.state, "locks", "ext.lock"), "sleep", arg)
	// flock(1) takes the lock before it forks the command.
	waitFor(t, 10*time.Second, "flock's command", func() bool { return len(withCmdline(arg)) >= 2 })

	code, _, stderr := s.runCV(10*time.Second, "run", "ext")
	if code != 0 {
		t.Errorf("run under a foreign holder: exit %d, want 0; stderr %q", code, stderr)
	}
	if !regexp.MustCompile(`\bpid ` + strconv.Itoa(holder.pid()) + `\b`).MatchString(stderr) {
		t.Errorf("skip reason %q does not name flock's pid %d", stderr, holder.pid())
	}
	if n := len(lines(stderr)); n != 1 {
		t.Errorf("skip reason is %d lines, want one: %q", n, stderr)
	}
	r := s.locksJSON("ext")
	if !r.Held || !r.Foreign || r.PID != holder.pid() || !strings.Contains(r.Cmdline, "sleep") {
		t.Errorf("locks --json: %+v, want held, foreign, pid %d, cmdline with sleep", r, holder.pid())
	}
	if got := readFile(t, filepath.Join(s.dir, "ran.txt")); got != "" {
		t.Errorf("the job ran under a foreign holder: %q", got)
	}

	_ = syscall.Kill(-holder.pid(), syscall.SIGKILL)
	holder.wait(5 * time.Second)
	if code, _, stderr := s.runCV(10*time.Second, "run", "ext"); code != 0 || readFile(t, filepath.Join(s.dir, "ran.txt")) != "ran\n" {
		t.Errorf("run after flock ended: exit %d, stderr %q; want the job to run", code, stderr)
	}
}

func TestE2ESymlinkedLockRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		existing bool
	}{
		{"to a file outside", true},
		{"dangling", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t, `jobs:
  - name: sym
    schedule: "@hourly"
    command: echo ran >> ran.txt
    timeout: 5s
`)
			target := filepath.Join(t.TempDir(), "precious")
			if tc.existing {
				if err := os.WriteFile(target, []byte("precious data\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			lockPath := filepath.Join(s.state, "locks", "sym.lock")
			if err := os.MkdirAll(filepath.Dir(lockPath), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, lockPath); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := s.runCV(10*time.Second, "run", "sym")
			if code != 125 {
				t.Errorf("exit %d, want 125; stderr %q", code, stderr)
			}
			if !strings.Contains(stderr, lockPath) {
				t.Errorf("stderr %q does not name %s", stderr, lockPath)
			}
			got, err := os.ReadFile(target)
			switch {
			case tc.existing && string(got) != "precious data\n":
				t.Errorf("symlink target changed: %q, %v", got, err)
			case !tc.existing && err == nil:
				t.Errorf("dangling symlink's target was created: %q", got)
			}
			if got := readFile(t, filepath.Join(s.dir, "ran.txt")); got != "" {
				t.Errorf("the job ran without its lock: %q", got)
			}
		})
	}
}
