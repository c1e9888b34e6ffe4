package ui

import (
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// TestFailCountsFailedSlots is issue 25's point 6: a slot whose failed
// attempts were retried until one succeeded adds runs, not failures; a
// slot that ends failed adds one failure, whatever its attempts.
func TestFailCountsFailedSlots(t *testing.T) {
	f := newFake()
	m := loaded(t, f, Options{}, 120, 30)
	before, _ := m.c.data.job("backup_db")
	attempt := func(id string, n int, o run.Outcome, retrying bool) ctl.WireEvent {
		return ctl.WireEvent{Type: ctl.EventRunFinished, Job: "backup_db", RunID: id, Attempt: n,
			Time: at(time.Duration(n) * time.Second), StartedAt: at(0), Outcome: o, ExitCode: exit(1), Retrying: retrying}
	}
	m = feed(t, m, f,
		attempt("a1", 1, run.Failed, true), attempt("a2", 2, run.Failed, true), attempt("a3", 3, run.OK, false), // flaky, then ok
		attempt("b1", 1, run.Failed, true), attempt("b2", 2, run.Timeout, false)) // out of attempts
	after, _ := m.c.data.job("backup_db")
	if runs, fails := after.Counts.Runs-before.Counts.Runs, after.Counts.Failures-before.Counts.Failures; runs != 5 || fails != 1 {
		t.Errorf("two slots of five attempts added %d runs and %d failures, want 5 and 1 (the slot that ended timeout)", runs, fails)
	}
}

// TestCountersWhileTheDaemonIsGone: with the daemon gone, the counters
// are the last ones it reported, greyed with the rest of the screen, not
// the state dir's zeros; a job it never reported shows "—".
func TestCountersWhileTheDaemonIsGone(t *testing.T) {
	f, sd := newFake(), newFakeStateDir()
	for i := range sd.jobs {
		sd.jobs[i].Counts = ctl.Counts{} // a state dir counts nothing
	}
	sd.jobs = append(sd.jobs, ctl.JobStatus{Name: "zz_new", Schedule: "@hourly", State: ctl.StateIdle, Enabled: true})
	m := loseToStateDir(t, loaded(t, f, Options{Offline: sd}, 200, 30), f) // wide enough for the counters beside the preview
	m = selectJob(t, m, "refund_orders")                                   // zz_new only in its row, not the preview's title
	s := m.View()
	if line := lineWith(s, "sync_orders"); !strings.Contains(line, "8630/212/4") {
		t.Errorf("sync_orders' counters are not the daemon's last: %q", line)
	}
	if c := cellUnder(t, s, "RUN/SKIP/FAIL", "zz_new"); c != "—" {
		t.Errorf("a job no daemon counted reads %q, want — for its counters", c)
	}
}
