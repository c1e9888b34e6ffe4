package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// outputRecord is the part of a daemon log record about output.
type outputRecord struct {
	Msg, Job, Line string
	RunID          string `json:"run_id"`
	NotLogged      int    `json:"lines_not_logged"`
}

// daemonOutput parses a daemon's JSON stderr and returns, for run, how
// many output lines were logged and how many the markers say were not.
func daemonOutput(t *testing.T, d *proc, run string) (logged, notLogged int) {
	t.Helper()
	for _, l := range lines(d.stderr()) {
		var r outputRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("daemon log line is not JSON: %q", l)
		}
		switch {
		case r.RunID != run:
		case r.Msg == "output":
			logged++
		case r.NotLogged > 0:
			if want := fmt.Sprintf("%d lines of %s %s not logged", r.NotLogged, r.Job, run); r.Msg != want {
				t.Errorf("marker %q, want %q", r.Msg, want)
			}
			notLogged += r.NotLogged
		}
	}
	return logged, notLogged
}

// TestE2EJobPrintingTenMillionLinesFinishesFast: a job printing 10M short
// lines (20 MB; 0.03 s on its own) under a daemon used to take 30 s, its
// every line copied to the daemon's log. It must finish within 2 s, the
// daemon's log must stay small and account for every line, and the run's
// log file keep its head and tail.
func TestE2EJobPrintingTenMillionLinesFinishesFast(t *testing.T) {
	if testing.Short() {
		t.Skip("a time bound on 20 MB of output, unfair beside -short's other packages; runs in the full suite")
	}
	t.Parallel()
	s := newSandbox(t, `shutdown_grace: 10s
jobs:
  - {name: chatty, schedule: "@every 1s", command: "yes | head -c 20000000", timeout: 60s}
`)
	d := s.cv("daemon", "--log-format", "json")
	waitFor(t, 60*time.Second, "the first run to finish", func() bool { return strings.Contains(d.stderr(), `"msg":"run finished"`) })
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	if code := d.wait(30 * time.Second); code != 0 {
		t.Fatalf("daemon exit %d; stderr:\n%.2000s", code, d.stderr())
	}
	runs := s.historyJSON("--job", "chatty")
	if len(runs) == 0 {
		t.Fatal("no run recorded")
	}
	first := runs[len(runs)-1] // newest first
	took := first.EndedAt.Sub(first.StartedAt)
	t.Logf("10M lines under the daemon: %v", took)
	if first.Outcome != "ok" || took > 2*time.Second {
		t.Errorf("run %s: %s after %v, want ok within 2s", first.RunID, first.Outcome, took)
	}

	logged, notLogged := daemonOutput(t, d, first.RunID)
	if logged+notLogged != 10_000_000 || notLogged == 0 {
		t.Errorf("daemon log: %d lines logged + %d not logged, want 10,000,000 with a cap", logged, notLogged)
	}
	if fi, err := os.Stat(d.errF); err != nil {
		t.Error(err)
	} else if fi.Size() > 8<<20 {
		t.Errorf("daemon log is %d bytes, want it capped", fi.Size())
	}

	b, err := os.ReadFile(first.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	head, tail, cut := strings.Cut(string(b), "... [cronvisor: ")
	if !cut || len(b) > 1<<20+100 || !strings.HasPrefix(head, "stdout | y\n") || !strings.HasSuffix(tail, "stdout | y\n") {
		t.Errorf("run log: %d bytes, cut %v, head %.30q, tail ...%q; want the 1 MiB head and tail with the cut marked",
			len(b), cut, head, tail[max(0, len(tail)-30):])
	}
}

// TestE2ELogOutputFalseKeepsOutputOutOfDaemonLog: log_output: false keeps
// a job's lines out of the daemon's log, not out of its run log.
func TestE2ELogOutputFalseKeepsOutputOutOfDaemonLog(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	s := newSandbox(t, `jobs:
  - {name: quiet, schedule: "@every 1s", command: "echo secret-line", timeout: 10s, log_output: false}
  - {name: loud, schedule: "@every 1s", command: "echo public-line", timeout: 10s}
`)
	d := s.cv("daemon", "--log-format", "json")
	waitFor(t, 20*time.Second, "both jobs to run", func() bool {
		e := d.stderr()
		return strings.Count(e, `"msg":"run finished"`) >= 2 && strings.Contains(e, "public-line")
	})
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	d.wait(20 * time.Second)
	if strings.Contains(d.stderr(), "secret-line") {
		t.Errorf("the daemon logged output of a log_output: false job:\n%s", d.stderr())
	}
	runs := s.historyJSON("--job", "quiet")
	if len(runs) == 0 || runs[0].LogPath == "" {
		t.Fatalf("quiet runs %+v, want one with a log file", runs)
	}
	if got := readFile(t, runs[0].LogPath); got != "stdout | secret-line\n" {
		t.Errorf("run log %q, want the line", got)
	}
}
