package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/redistest"
)

// killDaemonInto starts a daemon, waits for its first `run started`, and
// SIGKILLs the daemon (its process group: the run and its keeper each
// have one of their own) after runs of that run. It returns the run's id
// and when it started, as the daemon logged it.
func (s *sandbox) killDaemonInto(after time.Duration) (string, time.Time) {
	t := s.t
	t.Helper()
	d := s.cv("daemon", "--log-format", "json")
	waitFor(t, 10*time.Second, "run started", func() bool { return strings.Contains(d.stderr(), `"msg":"run started"`) })
	seen := time.Now()
	runID := runIDOf(t, d.stderr(), "run started")
	time.Sleep(after)
	_ = syscall.Kill(-d.pid(), syscall.SIGKILL)
	d.wait(5 * time.Second)
	return runID, seen
}

// recordOf waits for runID's record to be closed and returns it; the
// history must hold it once.
func (s *sandbox) recordOf(runID string, within time.Duration) run.Record {
	s.t.Helper()
	var r run.Record
	waitFor(s.t, within, "run "+runID+" recorded", func() bool {
		r = s.runsByID()[runID]
		return r.Outcome != "" && r.Outcome != run.Running
	})
	return r
}

// TestE2EDeadlineOutlivesAKilledSupervisor: a run with timeout 2s whose
// daemon is SIGKILLed 0.5 s in, with no cronvisor running afterwards, is
// still ended at its deadline (nothing of it is left 2 s + kill_grace +
// 1 s after its start); the next daemon records it once, `timeout`.
func TestE2EDeadlineOutlivesAKilledSupervisor(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	arg := sleepArg("30.3")
	s := newSandbox(t, `jobs:
  - {name: too_slow, schedule: "* * * * * *", command: "sleep `+arg+`", timeout: 2s, kill_grace: 1s}
`)
	t.Cleanup(func() { killCmdline(arg) })
	runID, started := s.killDaemonInto(500 * time.Millisecond)
	if len(withCmdline(arg)) == 0 {
		t.Fatal("the run did not outlive its supervisor")
	}
	bound := started.Add(2*time.Second + time.Second + time.Second)
	waitFor(t, time.Until(bound)+time.Second, "no process of the run", func() bool { return len(withCmdline(arg)) == 0 })
	if late := time.Since(bound); late > 0 {
		t.Fatalf("the run's processes were gone %v after start + timeout + kill_grace + 1 s", late)
	}
	d := s.startDaemon()
	r := s.recordOf(runID, 10*time.Second)
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	d.wait(15 * time.Second)
	if r.Outcome != run.Timeout || !strings.Contains(r.Reason, "exceeded timeout 2s") {
		t.Errorf("run recorded %s (%q), want timeout", r.Outcome, r.Reason)
	}
	if r.ExitCode == nil || *r.ExitCode != 143 {
		t.Errorf("exit code %v, want 143 (SIGTERM at the deadline)", r.ExitCode)
	}
	// The keeper ended it through its cgroup leaf (this machine has a
	// usable cgroup v2 hierarchy) and read what it cost from there.
	if !r.Usage.Measured {
		t.Errorf("the keeper's record has no usage, want it read from the run's leaf: %+v", r)
	}
}

// TestE2EExitStatusOutlivesAKilledSupervisor: `sleep 1; exit 7` whose
// daemon is SIGKILLed 0.3 s in; 3 s without cronvisor, then a daemon: one
// record, failed, exit 7, its end within 200 ms of the real one.
func TestE2EExitStatusOutlivesAKilledSupervisor(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	arg := sleepArg("1.0")
	s := newSandbox(t, `jobs:
  - {name: seven, schedule: "* * * * * *", command: "sleep `+arg+`; date +%s.%N >ended.$CRONVISOR_RUN_ID; exit 7", timeout: 1m}
`)
	t.Cleanup(func() { killCmdline(arg) })
	runID, _ := s.killDaemonInto(300 * time.Millisecond)
	time.Sleep(3 * time.Second)
	if len(withCmdline(arg)) != 0 {
		t.Fatal("the run is still going 3 s after its supervisor died")
	}
	d := s.startDaemon()
	r := s.recordOf(runID, 10*time.Second)
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	d.wait(15 * time.Second)
	if r.Outcome != run.Failed || r.ExitCode == nil || *r.ExitCode != 7 {
		t.Fatalf("run recorded %s exit %v (%q), want failed, exit 7", r.Outcome, r.ExitCode, r.Reason)
	}
	real := unixFile(t, s.dir+"/ended."+runID)
	if d := r.EndedAt.Sub(real).Abs(); d > 200*time.Millisecond {
		t.Errorf("ended_at %v is %v from the job's real end %v", r.EndedAt, d, real)
	}
	if got := s.runsByID()[runID]; got.DurationMS() > 2000 {
		t.Errorf("duration_ms %d for a run of about 1 s", got.DurationMS())
	}
}

// unixFile reads a time that `date +%s.%N` wrote to path.
func unixFile(t *testing.T, path string) time.Time {
	t.Helper()
	return parseUnix(t, strings.TrimSpace(readFile(t, path)))
}

// parseUnix reads a time as `date +%s.%N` writes it.
func parseUnix(t *testing.T, text string) time.Time {
	t.Helper()
	sec, frac, _ := strings.Cut(text, ".")
	secs, err1 := strconv.ParseInt(sec, 10, 64)
	nanos, err2 := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("%q is not a date +%%s.%%N", text)
	}
	return time.Unix(secs, nanos)
}

// TestE2EUpgradeHandsRunsOver: a 10 s run; the daemon is replaced mid-run
// the documented way (SIGUSR2, then a new daemon on the state dir): the
// run completes, is recorded once, ok, exit 0; no second copy of it ever
// runs, and the new daemon keeps scheduling.
func TestE2EUpgradeHandsRunsOver(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a 10 s run handed over between daemons; runs in the full suite")
	}
	t.Parallel()
	arg := sleepArg("10.0")
	s := newSandbox(t, `shutdown_grace: 1s
jobs:
  - {name: long, schedule: "* * * * * *", command: "sleep `+arg+`", timeout: 1m}
  - {name: tick, schedule: "* * * * * *", command: "true", timeout: 10s}
`)
	t.Cleanup(func() { killCmdline(arg) })
	old := s.cv("daemon", "--log-format", "json")
	waitFor(t, 10*time.Second, "run started", func() bool { return strings.Contains(old.stderr(), `"job":"long"`) })
	var runID string
	for _, l := range lines(old.stderr()) {
		if strings.Contains(l, `"msg":"run started"`) && strings.Contains(l, `"job":"long"`) {
			var rec struct {
				RunID string `json:"run_id"`
			}
			_ = json.Unmarshal([]byte(l), &rec)
			runID = rec.RunID
			break
		}
	}
	time.Sleep(2 * time.Second)
	_ = syscall.Kill(old.pid(), syscall.SIGUSR2)
	if code := old.wait(5 * time.Second); code != 0 {
		t.Fatalf("old daemon exit %d after SIGUSR2: %s", code, old.stderr())
	}
	if n := sleeps(arg); n != 1 {
		t.Fatalf("%d copies of the run after the hand-over, want it going on, once", n)
	}
	handedOver := time.Now()
	next := s.startDaemon()
	for deadline := time.Now().Add(9 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if n := sleeps(arg); n > 1 {
			t.Fatalf("%d copies of the run at once", n)
		}
	}
	r := s.recordOf(runID, 10*time.Second)
	if r.Outcome != run.OK || r.ExitCode == nil || *r.ExitCode != 0 {
		t.Errorf("handed-over run recorded %s exit %v (%q), want ok, exit 0", r.Outcome, r.ExitCode, r.Reason)
	}
	ticks := 0
	for _, rr := range s.runsByID() {
		if rr.Job == "tick" && rr.StartedAt.After(handedOver) && rr.Outcome == run.OK {
			ticks++
		}
	}
	if ticks < 5 {
		t.Errorf("the new daemon ran tick %d times since the hand-over, want it scheduling (>= 5)", ticks)
	}
	_ = syscall.Kill(next.pid(), syscall.SIGTERM)
	next.wait(15 * time.Second)
}

// TestE2ELeaseRunKilledAtStartHasOneRecord: for each lease backend, the
// daemon SIGKILLed the instant it logs `run started`, 5 times, each time
// the next daemon started on the same state dir: 5 runs, each with
// exactly one record, closed. (No lock record in flight tells of these
// runs: their keepers' Ends do.)
func TestE2ELeaseRunKilledAtStartHasOneRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test: runs in the full suite")
	}
	t.Parallel()
	job := "jobs:\n  - {name: quick, schedule: \"* * * * * *\", command: \"sleep 0.3\", timeout: 10s}\n"
	backends := map[string]func(t *testing.T) *sandbox{
		"redis": func(t *testing.T) *sandbox { return redisSandbox(t, redistest.New(t).URL(), job) },
	}
	for _, kind := range []string{"mysql", "postgres"} {
		backends[kind] = func(t *testing.T) *sandbox {
			srv := sharedSQLServer(t, kind)
			db, _ := srv.newDB(t)
			return sqlSandbox(t, srv, db, job)
		}
	}
	for kind, open := range backends {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			var ids []string
			for range 5 {
				id, _ := s.killAtRunStarted(15 * time.Second)
				ids = append(ids, id)
			}
			d := s.startDaemon()
			for _, id := range ids {
				if r := s.recordOf(id, 15*time.Second); r.Outcome == run.Running {
					t.Errorf("run %s still open", id)
				}
			}
			_ = syscall.Kill(d.pid(), syscall.SIGTERM)
			d.wait(15 * time.Second)
			got := s.runsByID() // fails on a run recorded twice
			for _, id := range ids {
				t.Logf("%s: %s %q", id, got[id].Outcome, got[id].Reason)
			}
		})
	}
}

// TestE2ESupervisorAndKeeperKilledRecordEachRunOnce: the daemon and the
// keeper of its run SIGKILLed together, again and again, a new daemon each
// time: every run still has exactly one record, and no two runs overlap
// (the run's own processes hold its flock; without its keeper it is
// recovered as interrupted once they exit). In both durability modes:
// the slot cursors and lock records every next daemon reads were never
// synced under process.
func TestE2ESupervisorAndKeeperKilledRecordEachRunOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test: runs in the full suite")
	}
	t.Parallel()
	eachDurability(t, supervisorAndKeeperKilled)
}

func supervisorAndKeeperKilled(t *testing.T, durability string) {
	spans := filepath.Join(t.TempDir(), "spans.txt")
	s := newSandbox(t, durability+fmt.Sprintf(`shutdown_grace: 1s
jobs:
  - name: work
    schedule: "* * * * * *"
    command: trap 'echo "end $(date +%%s%%N) $$" >> %[1]s; exit 143' TERM; echo "start $(date +%%s%%N) $$" >> %[1]s; sleep 1.5 & wait; trap '' TERM; echo "end $(date +%%s%%N) $$" >> %[1]s
    timeout: 30s
`, spans))
	kills := 0
	for end := time.Now().Add(12 * time.Second); time.Now().Before(end); kills++ {
		d := s.cv("daemon", "--log-format", "json")
		waitFor(t, 10*time.Second, "a run", func() bool { return strings.Count(d.stderr(), `"msg":"run started"`) > 0 })
		time.Sleep(300 * time.Millisecond)
		_ = syscall.Kill(-d.pid(), syscall.SIGKILL)
		s.killKeepers()
		d.wait(5 * time.Second)
	}
	// The last run, its keeper killed, ends by itself: then a daemon
	// records every run the killed ones left.
	waitFor(t, 5*time.Second, "the last run's end", func() bool {
		return strings.Count(readFile(t, spans), "start") == strings.Count(readFile(t, spans), "end")
	})
	before := time.Now()
	last := s.startDaemon()
	waitFor(t, 10*time.Second, "every run closed", func() bool {
		for _, r := range s.runsByID() { // fails on a run recorded twice
			if r.Outcome == run.Running && r.StartedAt.Before(before) {
				return false
			}
		}
		return true
	})
	_ = syscall.Kill(last.pid(), syscall.SIGTERM)
	last.wait(15 * time.Second)
	got := s.runsByID()
	all := readSpans(t, spans)
	if t.Failed() {
		t.Logf("spans:\n%s\nlast daemon:\n%s", readFile(t, spans), last.stderr())
	}
	if n := countOverlaps(all); n > 0 {
		t.Errorf("%d pairs of runs overlap", n)
	}
	if len(got) < len(all) {
		t.Errorf("%d runs started, %d recorded", len(all), len(got))
	}
	t.Logf("%d kills of daemon and keeper, %d runs, %d records", kills, len(all), len(got))
}

// runIDOf returns the run id of the first JSON log record with message msg.
func runIDOf(t *testing.T, stderr, msg string) string {
	t.Helper()
	for _, l := range lines(stderr) {
		var rec struct {
			Msg   string `json:"msg"`
			RunID string `json:"run_id"`
		}
		if json.Unmarshal([]byte(l), &rec) == nil && rec.Msg == msg {
			return rec.RunID
		}
	}
	t.Fatalf("no %q record in %s", msg, stderr)
	return ""
}
