package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// TestE2EDaemonAndRunsNeverOverlap: the daemon fires a 2.5 s job every
// second while two shells run it with `cronvisor run` in a loop: the lock
// keeps every copy apart, and each refused fire names the holder.
func TestE2EDaemonAndRunsNeverOverlap(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test: runs in the full suite")
	}
	t.Parallel()
	// Each run writes its start and end (ns since the epoch) to its own
	// line pair; overlapping intervals would mean two copies at once.
	s := newSandbox(t, `shutdown_grace: 5s
jobs:
  - name: sync
    schedule: "@every 1s"
    command: echo "start $(date +%s%N) $$" >> runs.txt; sleep 2.5; echo "end $(date +%s%N) $$" >> runs.txt
    timeout: 10s
`)
	d := s.startDaemon()
	end := time.Now().Add(15 * time.Second)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for time.Now().Before(end) {
				s.runCV(20*time.Second, "run", "sync")
				time.Sleep(300 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	stopDaemons(t, d)
	runs := checkNoOverlap(t, filepath.Join(s.dir, "runs.txt"), true)
	if runs < 4 {
		t.Errorf("only %d runs in 15 s of a 2.5 s job every second", runs)
	}
	skips := s.historyJSON("--job", "sync", "--outcome", "skipped")
	withHolder := 0
	for _, r := range skips {
		if r.Holder != nil && r.Holder.PID > 0 && r.Holder.Host != "" && strings.HasPrefix(r.Reason, "lock held by pid "+strconv.Itoa(r.Holder.PID)) {
			withHolder++
		}
	}
	t.Logf("%d runs, %d skips (%d naming the holder)", runs, len(skips), withHolder)
	if withHolder < 15 {
		t.Errorf("%d skips name the holder, want most of the ~%d fires that found the lock held", withHolder, 15)
	}
}

func TestE2EReloadKeepsOldJobsOnBrokenFile(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	good := `jobs:
  - name: a
    schedule: "@every 1s"
    command: echo a >> a.txt
    timeout: 5s
`
	s := newSandbox(t, good)
	d := s.cv("daemon", "--log-format", "json")
	waitFor(t, 10*time.Second, "daemon start", func() bool { return strings.Contains(d.stderr(), "cronvisor started") })
	countA := func() int { return len(lines(readFile(t, filepath.Join(s.dir, "a.txt")))) }
	waitFor(t, 10*time.Second, "job a fires", func() bool { return countA() >= 1 })

	broken := "state_dir: state\n" + good + "  - name: b\n    schedule: \"@every 1s\"\n    command: echo b >> b.txt\n    timeout: 5x\n"
	if err := os.WriteFile(s.config, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = syscall.Kill(d.pid(), syscall.SIGHUP)
	waitFor(t, 10*time.Second, "reload refused", func() bool {
		return strings.Contains(d.stderr(), "reload refused") && strings.Contains(d.stderr(), "jobs.yaml:10:14:")
	})
	before := countA()
	waitFor(t, 10*time.Second, "job a keeps firing", func() bool { return countA() >= before+2 })

	fixed := strings.Replace(broken, "timeout: 5x", "timeout: 5s", 1)
	if err := os.WriteFile(s.config, []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = syscall.Kill(d.pid(), syscall.SIGHUP)
	waitFor(t, 10*time.Second, "new job b fires", func() bool {
		return len(lines(readFile(t, filepath.Join(s.dir, "b.txt")))) >= 1
	})
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	if code := d.wait(10 * time.Second); code != 0 {
		t.Errorf("daemon exit %d", code)
	}
}

func TestE2ESIGTERMWaitsForRunningJob(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	s := newSandbox(t, `shutdown_grace: 20s
jobs:
  - name: slowish
    schedule: "@every 1s"
    command: sleep 2; echo finished >> done.txt
    timeout: 10s
`)
	d := s.cv("daemon", "--log-format", "json")
	waitFor(t, 10*time.Second, "run started", func() bool { return strings.Contains(d.stderr(), `"msg":"run started"`) })
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	if code := d.wait(15 * time.Second); code != 0 {
		t.Fatalf("daemon exit %d, want 0", code)
	}
	if got := readFile(t, filepath.Join(s.dir, "done.txt")); got != "finished\n" {
		t.Fatalf("the running job did not finish before the daemon exited: %q", got)
	}
	runs := s.historyJSON("--job", "slowish", "--outcome", "ok")
	if len(runs) != 1 || runs[0].ExitCode == nil || *runs[0].ExitCode != 0 {
		t.Fatalf("history has %+v, want the one run recorded ok", runs)
	}
}

func TestE2EShutdownGraceEndsRuns(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	arg := sleepArg("41.1")
	s := newSandbox(t, `shutdown_grace: 1s
jobs:
  - name: stuck
    schedule: "@every 1s"
    command: sleep `+arg+`
    timeout: 60s
    kill_grace: 1s
`)
	d := s.cv("daemon", "--log-format", "json")
	waitFor(t, 10*time.Second, "run started", func() bool { return strings.Contains(d.stderr(), `"msg":"run started"`) })
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	if code := d.wait(10 * time.Second); code != 0 {
		t.Fatalf("daemon exit %d, want 0", code)
	}
	if took := d.elapsed(); took > 30*time.Second {
		t.Errorf("took %v", took)
	}
	if left := withCmdline(arg); len(left) > 0 {
		t.Fatalf("job processes survive the daemon: %+v", left)
	}
	runs := s.historyJSON("--job", "stuck", "--outcome", "interrupted")
	if len(runs) != 1 || !strings.Contains(runs[0].Reason, "shutdown_grace exceeded") {
		t.Fatalf("history %+v, want one run interrupted by the shutdown", runs)
	}
}

// TestE2EHistoryOutcomesRoundTrip produces every outcome with real runs
// and checks each record's contract fields in `history --json`.
func TestE2EHistoryOutcomesRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	arg := sleepArg("42.2")
	s := newSandbox(t, `shutdown_grace: 2s
jobs:
  - {name: okjob, schedule: "@daily", command: "echo fine", timeout: 5s}
  - {name: failjob, schedule: "@daily", command: "exit 3", timeout: 5s}
  - {name: slowjob, schedule: "@daily", command: "sleep `+arg+`", timeout: 1s, kill_grace: 1s}
  - {name: lockedjob, schedule: "@daily", command: "true", timeout: 5s}
  - {name: missingjob, schedule: "@daily", command: ["/nonexistent/bin"], timeout: 5s}
  - {name: longjob, schedule: "@daily", command: "sleep `+arg+`", timeout: 30s, kill_grace: 1s}
  - {name: replacejob, schedule: "@every 1s", command: "sleep `+arg+`", timeout: 30s, kill_grace: 1s, overlap: replace}
`)
	for _, c := range []struct {
		job  string
		code int
	}{{"okjob", 0}, {"failjob", 3}, {"slowjob", 124}, {"missingjob", 127}} {
		if code, _, stderr := s.runCV(20*time.Second, "run", c.job); code != c.code {
			t.Fatalf("run %s: exit %d, want %d; stderr %q", c.job, code, c.code, stderr)
		}
	}
	// skipped, with a foreign holder.
	if err := os.MkdirAll(filepath.Join(s.state, "locks"), 0o700); err != nil {
		t.Fatal(err)
	}
	holder := s.startEnv(nil, "flock", "-n", filepath.Join(s.state, "locks", "lockedjob.lock"), "sleep", arg)
	waitFor(t, 5*time.Second, "flock holds", func() bool { return s.locksJSON("lockedjob").Held })
	if code, _, _ := s.runCV(10*time.Second, "run", "lockedjob"); code != 0 {
		t.Fatalf("skipped run exit %d", code)
	}
	_ = syscall.Kill(-holder.pid(), syscall.SIGKILL)
	// interrupted: SIGTERM to `cronvisor run`.
	long := s.cv("run", "longjob")
	waitFor(t, 10*time.Second, "longjob runs", func() bool { return s.locksJSON("longjob").Held })
	_ = syscall.Kill(long.pid(), syscall.SIGTERM)
	if code := long.wait(10 * time.Second); code != 128+int(syscall.SIGTERM) {
		t.Fatalf("interrupted run exit %d, want %d", code, 128+int(syscall.SIGTERM))
	}
	// replaced: a daemon's replace policy.
	d := s.cv("daemon", "--log-format", "json")
	waitFor(t, 15*time.Second, "a replaced run", func() bool { return strings.Contains(d.stderr(), `"outcome":"replaced"`) })
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	d.wait(15 * time.Second)

	byOutcome := map[string]map[string]any{} // "outcome job" -> newest record
	for _, r := range s.historyRaw() {
		key := r["outcome"].(string) + " " + r["job"].(string)
		if _, seen := byOutcome[key]; !seen {
			byOutcome[key] = r
		}
	}
	num := func(v float64) any { return v }
	tests := []struct {
		outcome string
		job     string
		exit    any // float64 or nil
		reason  string
		started bool
	}{
		{"ok", "okjob", num(0), "", true},
		{"failed", "failjob", num(3), "", true},
		{"timeout", "slowjob", num(143), "exceeded timeout 1s", true},
		{"skipped", "lockedjob", nil, "lock held by pid ", false},
		{"error", "missingjob", num(127), "failed to start", false},
		{"interrupted", "longjob", nil, "interrupted by terminated", true},
		{"replaced", "replacejob", num(143), "replaced by a newer fire", true},
	}
	fields := []string{"job", "run_id", "outcome", "scheduled_at", "started_at", "ended_at", "duration_ms", "exit_code", "reason", "holder"}
	for _, tc := range tests {
		t.Run(tc.outcome, func(t *testing.T) {
			r := byOutcome[tc.outcome+" "+tc.job]
			if r == nil {
				t.Fatalf("no %s record of %s in history", tc.outcome, tc.job)
			}
			for _, f := range fields {
				if _, ok := r[f]; !ok {
					t.Errorf("field %q missing from %v", f, r)
				}
			}
			if r["job"] != tc.job || r["run_id"] == "" {
				t.Errorf("job %v run_id %v, want job %s and a run id", r["job"], r["run_id"], tc.job)
			}
			if tc.exit != nil && r["exit_code"] != tc.exit {
				t.Errorf("exit_code %v, want %v", r["exit_code"], tc.exit)
			}
			if !strings.Contains(r["reason"].(string), tc.reason) {
				t.Errorf("reason %q, want it to contain %q", r["reason"], tc.reason)
			}
			if _, err := time.Parse(time.RFC3339Nano, r["scheduled_at"].(string)); err != nil {
				t.Errorf("scheduled_at %v: %v", r["scheduled_at"], err)
			}
			if tc.started {
				st, err1 := time.Parse(time.RFC3339Nano, r["started_at"].(string))
				en, err2 := time.Parse(time.RFC3339Nano, r["ended_at"].(string))
				if err1 != nil || err2 != nil || en.Before(st) {
					t.Errorf("started_at %v ended_at %v", r["started_at"], r["ended_at"])
				}
				if d := r["duration_ms"].(float64); int64(d) != en.Sub(st).Milliseconds() {
					t.Errorf("duration_ms %v, want %d", d, en.Sub(st).Milliseconds())
				}
			}
			if tc.outcome == "skipped" {
				h, ok := r["holder"].(map[string]any)
				if !ok || h["pid"] != float64(holder.pid()) {
					t.Errorf("holder %v, want flock's pid %d", r["holder"], holder.pid())
				}
			} else if r["holder"] != nil {
				t.Errorf("holder %v on a %s record", r["holder"], tc.outcome)
			}
		})
	}
}

// TestE2ESIGKILLLosesNoFinishedRun kills a daemon mid-runs: every run it
// logged as finished is in the history, and its run in flight is closed as
// interrupted once its surviving process lets go of the lock. In both
// durability modes.
func TestE2ESIGKILLLosesNoFinishedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	eachDurability(t, sigkillLosesNoFinishedRun)
}

func sigkillLosesNoFinishedRun(t *testing.T, durability string) {
	arg := sleepArg("43.3")
	s := newSandbox(t, durability+`jobs:
  - {name: quick, schedule: "* * * * * *", command: "echo q", timeout: 5s}
  - {name: slow, schedule: "@every 1s", command: "sleep `+arg+`", timeout: 60s}
`)
	d := s.cv("daemon", "--log-format", "json")
	waitFor(t, 10*time.Second, "some runs", func() bool { return strings.Count(d.stderr(), `"msg":"run finished"`) >= 3 })
	time.Sleep(700 * time.Millisecond)
	_ = syscall.Kill(d.pid(), syscall.SIGKILL)
	d.wait(5 * time.Second)

	finished := map[string]string{}
	for _, l := range lines(d.stderr()) {
		var rec struct{ Msg, RunID, Outcome string }
		var raw map[string]any
		if json.Unmarshal([]byte(l), &raw) != nil {
			continue // the last line may be cut by the kill
		}
		rec.Msg, _ = raw["msg"].(string)
		rec.RunID, _ = raw["run_id"].(string)
		rec.Outcome, _ = raw["outcome"].(string)
		if rec.Msg == "run finished" {
			finished[rec.RunID] = rec.Outcome
		}
	}
	got := map[string]run.Record{}
	for _, r := range s.historyJSON() {
		got[r.RunID] = r
	}
	for id, outcome := range finished {
		if string(got[id].Outcome) != outcome {
			t.Errorf("run %s finished %s before the kill; history says %q", id, outcome, got[id].Outcome)
		}
	}
	var slowRun run.Record
	for _, r := range got {
		if r.Job == "slow" && r.Outcome == "running" {
			slowRun = r
		}
	}
	if slowRun.RunID == "" {
		t.Fatalf("the slow run in flight is not in history as running: %+v", got)
	}
	// A new supervisor leaves it open while its process holds the lock...
	if code, _, stderr := s.runCV(10*time.Second, "run", "quick"); code != 0 {
		t.Fatalf("run quick: %d %s", code, stderr)
	}
	for _, r := range s.historyJSON("--job", "slow") {
		if r.RunID == slowRun.RunID && r.Outcome != "running" {
			t.Fatalf("slow run closed while its process still lives: %+v", r)
		}
	}
	// ...and closes it, with what its keeper saw, once the survivor has
	// gone: SIGKILLed, so failed with 137.
	for _, p := range withCmdline(arg) {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
	waitFor(t, 5*time.Second, "lock freed", func() bool { return !s.locksJSON("slow").Held })
	if code, _, stderr := s.runCV(10*time.Second, "run", "quick"); code != 0 {
		t.Fatalf("run quick: %d %s", code, stderr)
	}
	var closed run.Record
	for _, r := range s.historyJSON("--job", "slow") {
		if r.RunID == slowRun.RunID {
			closed = r
		}
	}
	if closed.Outcome != "failed" || closed.ExitCode == nil || *closed.ExitCode != 137 || closed.Reason != "ended by signal SIGKILL" {
		t.Fatalf("orphaned run recorded as %+v, want failed, exit 137, ended by signal SIGKILL", closed)
	}
}
