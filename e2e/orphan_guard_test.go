package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/redistest"
)

// orphanGuardTries is the tries of each backend in one run of the test:
// a try is 6-8 s, so the 20 tries are -count=10 by hand (see the commit).
const orphanGuardTries = 2

// TestE2EOrphanGuardedWhenDaemonAndKeeperDie: a `timeout: 4s` run whose
// daemon and keeper are both SIGKILLed 0.5 s in, the next daemon started
// 1 s later: that daemon guards the run in their place (from its guard
// slot), ends it at its deadline and records it once, timeout, by
// 4 s + kill_grace + 1 s after its start. Under a Redis lease (ttl 3 s,
// which lapses under the run without a guard) the lease is renewed for
// it meanwhile: no run of the job starts beside it (0 overlapping runs
// by the runs' own start and end lines). On MySQL and PostgreSQL the run
// holds its lock's session itself (fd 3): the same, the deadline alone
// being the guard's to keep.
func TestE2EOrphanGuardedWhenDaemonAndKeeperDie(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	for _, kind := range []string{"file", "redis", "mysql", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			spans := filepath.Join(t.TempDir(), "spans.txt") // outside the state dir
			jobs := fmt.Sprintf(`jobs:
  - name: guarded
    schedule: "* * * * * *"
    command: trap 'echo "end $(date +%%s%%N) $$" >> %[1]s; exit 143' TERM; echo "start $(date +%%s%%N) $$" >> %[1]s; sleep 30 & wait
    timeout: 4s
    kill_grace: 1s
`, spans)
			var s *sandbox
			switch kind {
			case "file":
				s = newSandbox(t, "shutdown_grace: 2s\n"+jobs)
			case "redis":
				s = newSandbox(t, fmt.Sprintf("lock_backend: {type: redis, url: %q, ttl: 3s}\nshutdown_grace: 2s\n", redistest.New(t).URL())+jobs)
			default:
				srv := sharedSQLServer(t, kind)
				db, _ := srv.newDB(t)
				s = sqlSandbox(t, srv, db, jobs)
			}
			for try := range orphanGuardTries {
				guardTry(t, s, try)
			}
			all := readSpans(t, spans)
			t.Logf("%d runs in %d tries, %d overlapping pairs", len(all), orphanGuardTries, countOverlaps(all))
			if n := countOverlaps(all); n > 0 {
				t.Errorf("%d pairs of runs overlap:\n%s", n, readFile(t, spans))
			}
		})
	}
}

// guardTry is one try: a daemon and its keeper killed mid-run, the next
// daemon guarding the run to its deadline; it stops that daemon.
func guardTry(t *testing.T, s *sandbox, try int) {
	t.Helper()
	runID, _ := s.killDaemonInto(500 * time.Millisecond)
	if s.killKeepers() == 0 {
		t.Fatalf("try %d: the run had no keeper to kill", try)
	}
	killed := time.Now()
	time.Sleep(time.Second)
	next := s.startDaemon()
	r := s.recordOf(runID, 15*time.Second)
	lasted := r.EndedAt.Sub(r.StartedAt)
	t.Logf("try %d: run %s recorded %s (%q) %v after its start; the next daemon started %v after the kill",
		try, runID, r.Outcome, r.Reason, lasted.Round(time.Millisecond), next.start.Sub(killed).Round(time.Millisecond))
	if r.Outcome != run.Timeout || !strings.Contains(r.Reason, "exceeded timeout 4s") || r.ExitCode != nil {
		t.Errorf("try %d: run recorded %s (%q, exit %v), want timeout, exit unknown", try, r.Outcome, r.Reason, r.ExitCode)
	}
	// The deadline is its keeper's, taken as the run was handed over, a
	// moment before the start that started_at records.
	if bound := 4*time.Second + time.Second + time.Second; lasted > bound || lasted < 3500*time.Millisecond {
		t.Errorf("try %d: recorded ended %v after its start, want at its timeout and by %v", try, lasted, bound)
	}
	// The lock is free once the run is recorded (a Redis lease released,
	// not left to lapse): the next daemon's own fire runs within a
	// second or two, after the guarded run (the overlap check).
	waitFor(t, 5*time.Second, "the next daemon's own run", func() bool {
		return strings.Contains(next.stderr(), `"msg":"run started"`)
	})
	if !strings.Contains(next.stderr(), `"msg":"guarding a dead supervisor's run whose keeper died too"`) {
		t.Errorf("try %d: the next daemon did not say it guards the run:\n%s", try, tail(next.stderr(), 20))
	}
	_ = syscall.Kill(next.pid(), syscall.SIGTERM)
	if code := next.wait(15 * time.Second); code != 0 {
		t.Errorf("try %d: next daemon exit %d", try, code)
	}
}

// TestE2EOrphanGuardedWhenAnAdoptedRunsKeeperDies: a `timeout: 4s` run
// whose daemon is SIGKILLed 0.5 s in, adopted by the next daemon (its
// keeper alive), and whose keeper is SIGKILLed 1 s later: the daemon
// guards it from then on, at once (not at its next sweep, a minute
// later), and it is ended at its deadline, recorded timeout by 4 s +
// kill_grace + 1 s after its start.
func TestE2EOrphanGuardedWhenAnAdoptedRunsKeeperDies(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	s := newSandbox(t, `shutdown_grace: 2s
jobs:
  - {name: adopted, schedule: "* * * * * *", command: "sleep 30", timeout: 4s, kill_grace: 1s}
`)
	runID, _ := s.killDaemonInto(500 * time.Millisecond)
	next := s.startDaemon()
	waitFor(t, 5*time.Second, "the run adopted", func() bool {
		code, out, _ := s.runCV(10*time.Second, "status", "--json")
		return code == 0 && strings.Contains(out, `"adopted":true`)
	})
	time.Sleep(time.Second)
	if s.killKeepers() == 0 {
		t.Fatal("the adopted run had no keeper to kill")
	}
	r := s.recordOf(runID, 10*time.Second)
	lasted := r.EndedAt.Sub(r.StartedAt)
	t.Logf("run %s recorded %s (%q) %v after its start", runID, r.Outcome, r.Reason, lasted.Round(time.Millisecond))
	if r.Outcome != run.Timeout || !strings.Contains(r.Reason, "exceeded timeout 4s") {
		t.Errorf("run recorded %s (%q), want timeout", r.Outcome, r.Reason)
	}
	if bound := 4*time.Second + time.Second + time.Second; lasted > bound || lasted < 3500*time.Millisecond {
		t.Errorf("recorded ended %v after its start, want at its timeout and by %v", lasted, bound)
	}
	stopDaemons(t, next)
}
