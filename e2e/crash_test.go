package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// TestE2ESIGKILLAtRunStartedLeavesOneRecordPerRun kills a daemon at the
// instant it logs a run's start, 20 times over, each time starting the
// next daemon on the state dir: every one of those runs ends up with
// exactly one record, closed (interrupted: its supervisor died, or
// finished), none left `running` and none missing. In both durability
// modes.
func TestE2ESIGKILLAtRunStartedLeavesOneRecordPerRun(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test: runs in the full suite")
	}
	t.Parallel()
	eachDurability(t, sigkillAtRunStarted)
}

func sigkillAtRunStarted(t *testing.T, durability string) {
	const repeats = 20
	s := newSandbox(t, durability+`jobs:
  - {name: quick, schedule: "* * * * * *", command: "sleep 0.2", timeout: 10s}
`)
	start := time.Now()
	var ids []string
	rebuilt := 0 // starts rebuilt from lock records, by the next daemons
	for range repeats {
		id, log := s.killAtRunStarted(10 * time.Second)
		ids = append(ids, id)
		rebuilt += strings.Count(log, "rebuilt the start")
	}
	t.Logf("%d daemons killed at their run's start in %v", repeats, time.Since(start).Round(time.Millisecond))
	// The next supervisor closes the last one too.
	d := s.cv("daemon", "--log-format", "json")
	final := func(r run.Record) bool {
		return r.Outcome == run.Interrupted || r.Outcome == run.OK
	}
	var runs map[string]run.Record
	waitFor(t, 10*time.Second, "every killed daemon's run recorded as closed", func() bool {
		runs = s.runsByID()
		for _, id := range ids {
			if !final(runs[id]) {
				return false
			}
		}
		return true
	})
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	if code := d.wait(15 * time.Second); code != 0 {
		t.Errorf("last daemon exit %d", code)
	}
	rebuilt += strings.Count(d.stderr(), "rebuilt the start")
	// Without a kill that beats the start row's commit, the test would
	// prove nothing; before the lock records were used, 20 of 20 did.
	t.Logf("%d of %d starts rebuilt from the lock record", rebuilt, repeats)
	if rebuilt == 0 {
		t.Errorf("no kill came before its run's start row was committed: the case is not exercised")
	}
	runs = s.runsByID()
	for _, id := range ids {
		r := runs[id]
		switch {
		case !final(r):
			t.Errorf("run %s: record %+v, want it interrupted or finished", id, r)
		case r.Outcome == run.Interrupted && !strings.Contains(r.Reason, "died"):
			t.Errorf("run %s interrupted with reason %q, want it to say the supervisor died", id, r.Reason)
		case r.ScheduledAt.IsZero() || r.EndedAt.IsZero():
			t.Errorf("run %s: record %+v lacks its slot or its end", id, r)
		}
	}
	for id, r := range runs {
		if r.Outcome == run.Running {
			t.Errorf("run %s still recorded running after every supervisor stopped: %+v", id, r)
		}
	}
}

// TestE2EOrphanInterruptedWithinSecondsOfItsExit kills a daemon while its
// run goes on: the run stays `running` while its orphaned process holds
// the lock, and is recorded `interrupted` within 3 s of that process's
// exit, by a supervisor started after the kill as well as by one that
// was already running beside the dead one (a `cronvisor run`). In both
// durability modes: the lock record the next supervisor reads was never
// synced under process.
func TestE2EOrphanInterruptedWithinSecondsOfItsExit(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	eachDurability(t, orphanInterruptedWithinSeconds)
}

func orphanInterruptedWithinSeconds(t *testing.T, durability string) {
	for _, tc := range []struct {
		name        string
		nextIsFirst bool // the next supervisor runs before the kill
	}{
		{"next supervisor started after the kill", false},
		{"other supervisor already running", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			arg := sleepArg("44.4")
			// A short shutdown_grace: once the orphan is gone, the next
			// fire may start a run of its own before the SIGTERM below,
			// and the stop must not wait the default 30 s for it.
			s := newSandbox(t, durability+`shutdown_grace: 2s
jobs:
  - {name: slow, schedule: "* * * * * *", command: "sleep `+arg+`", timeout: 60s}
`)
			var runID string
			var next *proc
			if tc.nextIsFirst {
				// One daemon per state dir: the supervisor that dies is a
				// `cronvisor run`, the daemon beside it already running.
				a := s.cv("run", "slow")
				waitFor(t, 10*time.Second, "run started", func() bool {
					var rec struct {
						PID           int    `json:"pid"`
						RunID         string `json:"run_id"`
						SupervisorPID int    `json:"supervisor_pid"`
					}
					err := json.Unmarshal([]byte(readFile(t, filepath.Join(s.state, "locks", "slow.lock"))), &rec)
					runID = rec.RunID
					return err == nil && rec.SupervisorPID == a.pid() && rec.PID != a.pid() // the job's pid: started
				})
				next = s.startDaemon()
				_ = syscall.Kill(a.pid(), syscall.SIGKILL)
				a.wait(5 * time.Second)
			} else {
				runID, _ = s.killAtRunStarted(10 * time.Second)
				next = s.startDaemon()
			}
			orphans := withCmdline(arg) // the shell and its sleep
			t.Cleanup(func() {
				for _, p := range withCmdline(arg) {
					_ = syscall.Kill(p.pid, syscall.SIGKILL)
				}
			})
			if len(orphans) == 0 {
				t.Fatalf("the killed daemon's run left no process behind")
			}
			// Another second of fires: the run must stay open while its
			// process lives and holds the lock.
			time.Sleep(1500 * time.Millisecond)
			if r := s.runsByID()[runID]; r.Outcome != run.Running {
				t.Fatalf("run %s recorded %+v while its process still runs, want running", runID, r)
			}
			// Its keeper is killed first: the floor, a run nothing of
			// cronvisor watches any more (see keeper_test.go for the
			// run its keeper sees to the end).
			if s.killKeepers() == 0 {
				t.Fatal("the orphaned run has no keeper")
			}
			for _, p := range orphans {
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
			}
			exited := time.Now()
			var r run.Record
			waitFor(t, 10*time.Second, "the orphan's run closed", func() bool {
				r = s.runsByID()[runID]
				return r.Outcome != run.Running
			})
			took := time.Since(exited)
			t.Logf("recorded %s %v after its process exited (ended_at %+v after)", r.Outcome, took.Round(time.Millisecond), r.EndedAt.Sub(exited).Round(time.Millisecond))
			if r.Outcome != run.Interrupted || r.ExitCode != nil || !strings.Contains(r.Reason, "died during the run") {
				t.Errorf("orphaned run recorded as %+v, want interrupted, exit unknown, supervisor died", r)
			}
			if took > 3*time.Second || r.EndedAt.Sub(exited) > 3*time.Second {
				t.Errorf("recorded %v after the orphan's exit (ended_at %v), want within 3 s", took, r.EndedAt.Sub(exited))
			}
			if r.StartedAt.IsZero() || r.EndedAt.Before(r.StartedAt) {
				t.Errorf("started_at %v, ended_at %v", r.StartedAt, r.EndedAt)
			}
			_ = syscall.Kill(next.pid(), syscall.SIGTERM)
			if code := next.wait(15 * time.Second); code != 0 {
				t.Errorf("next daemon exit %d", code)
			}
		})
	}
}
