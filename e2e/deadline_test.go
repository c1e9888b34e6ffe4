package e2e

import (
	"encoding/json"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// runLogged returns the run id of the first daemon log record with msg,
// or "".
func runLogged(t *testing.T, d *proc, msg string) string {
	t.Helper()
	for _, l := range lines(d.stderr()) {
		var r struct {
			Msg   string
			RunID string `json:"run_id"`
		}
		if json.Unmarshal([]byte(l), &r) == nil && r.Msg == msg {
			return r.RunID
		}
	}
	return ""
}

// TestE2ESIGSTOPPastDeadlineOfRunThatExitsZeroRecordsOK: a run exits 0
// after 1 s while its supervisor is frozen (SIGSTOP) past the run's 3 s
// deadline. Continued, the supervisor sees the deadline and the exit at
// once; the run ended by itself in time, so its record says ok, exit 0,
// not timeout.
func TestE2ESIGSTOPPastDeadlineOfRunThatExitsZeroRecordsOK(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	s := newSandbox(t, `shutdown_grace: 10s
jobs:
  - {name: brief, schedule: "@every 1s", command: "sleep 1; exit 0", timeout: 3s, kill_grace: 1s}
`)
	d := s.cv("daemon", "--log-format", "json")
	var run string
	waitFor(t, 15*time.Second, "a run to start", func() bool { run = runLogged(t, d, "run started"); return run != "" })
	if err := syscall.Kill(d.pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			_ = syscall.Kill(d.pid(), syscall.SIGCONT)
		}
	}()
	time.Sleep(5 * time.Second) // the run exits at 1 s; its deadline passes at 3 s
	if err := syscall.Kill(d.pid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	stopped = false
	waitFor(t, 15*time.Second, "the run to finish", func() bool { return runLogged(t, d, "run finished") != "" })
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	if code := d.wait(20 * time.Second); code != 0 {
		t.Fatalf("daemon exit %d", code)
	}
	for _, r := range s.historyJSON("--job", "brief") {
		if r.RunID != run {
			continue
		}
		if r.Outcome != "ok" || r.ExitCode == nil || *r.ExitCode != 0 {
			code := "none"
			if r.ExitCode != nil {
				code = strconv.Itoa(*r.ExitCode)
			}
			t.Fatalf("run %s recorded %s, exit %s, reason %q; want ok with exit 0", run, r.Outcome, code, r.Reason)
		}
		return
	}
	t.Fatalf("run %s has no record", run)
}
