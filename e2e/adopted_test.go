package e2e

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// A dead supervisor's runs as its successor shows them: adopted, killed,
// replaced, their logs followed.

// jobStatus is the part of a `status --json` row the adoption tests read.
type jobStatus struct {
	Name          string `json:"name"`
	State         string `json:"state"`
	RunID         string `json:"run_id"`
	PID           int    `json:"pid"`
	Adopted       bool   `json:"adopted"`
	SupervisorPID int    `json:"supervisor_pid"`
	// StartedAt and Deadline: an adopted run has its deadline as an own
	// run has (issue 43).
	StartedAt time.Time `json:"started_at"`
	Deadline  time.Time `json:"deadline"`
}

// statusOf is job's row of `status --json`.
func (s *sandbox) statusOf(job string) jobStatus {
	s.t.Helper()
	code, stdout, stderr := s.runCV(10*time.Second, "status", "--json")
	if code != 0 {
		s.t.Fatalf("status: exit %d: %s", code, stderr)
	}
	for _, l := range lines(stdout) {
		var row jobStatus
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			s.t.Fatalf("status line %q: %v", l, err)
		}
		if row.Name == job {
			return row
		}
	}
	s.t.Fatalf("no job %s in status:\n%s", job, stdout)
	return jobStatus{}
}

// TestE2EAdoptedRunIsShownAndKilled: a long run whose daemon is SIGKILLed,
// a new daemon at once: `status --json` shows the run running, adopted,
// with its pid and the dead supervisor's and its deadline, which the
// console shows as an own run's (`▶ 2s/1m`); `kill JOB` exits 0 and the
// run is recorded once, interrupted, killed by operator.
func TestE2EAdoptedRunIsShownAndKilled(t *testing.T) {
	t.Parallel()
	arg := sleepArg("40.4")
	// shutdown_grace: the next second's fire starts a run while kill waits
	// for the adopted one's end; the stop must not wait 30 s for it.
	s := newSandbox(t, `shutdown_grace: 1s
jobs:
  - {name: long, schedule: "* * * * * *", command: "sleep `+arg+`", timeout: 1m, kill_grace: 2s}
`)
	t.Cleanup(func() { killCmdline(arg) })
	d := s.cv("daemon", "--log-format", "json")
	waitFor(t, 10*time.Second, "run started", func() bool { return strings.Contains(d.stderr(), `"msg":"run started"`) })
	runID := runIDOf(t, d.stderr(), "run started")
	_ = syscall.Kill(-d.pid(), syscall.SIGKILL)
	d.wait(5 * time.Second)
	next := s.startDaemon()
	var st jobStatus
	waitFor(t, 5*time.Second, "the run shown adopted", func() bool {
		st = s.statusOf("long")
		return st.Adopted
	})
	if st.State != "running" || st.RunID != runID || st.PID == 0 || st.SupervisorPID != d.pid() {
		t.Errorf("status %+v, want running, adopted run %s, its pid, supervisor %d", st, runID, d.pid())
	}
	if got := st.Deadline.Sub(st.StartedAt); got != time.Minute {
		t.Errorf("the adopted run's deadline is %v after its start, want its timeout, 1m", got)
	}
	tm := startTmux(t, s, 100, 30, cvBin, "--config", s.config, "ui", "--read-only")
	tm.await(10*time.Second, "the adopted run's elapsed/timeout", func(sc string) bool {
		return elapsedOfMinuteRE.MatchString(lineWith(sc, " long "))
	})
	tm.keys("q")
	waitFor(t, 10*time.Second, "the console to exit", tm.dead)
	if code, out, errOut := s.runCV(10*time.Second, "kill", "long"); code != 0 {
		t.Fatalf("kill: exit %d: %s%s", code, out, errOut)
	}
	r := s.recordOf(runID, 10*time.Second)
	if r.Outcome != run.Interrupted || !strings.Contains(r.Reason, "killed by operator") {
		t.Errorf("adopted run killed: recorded %s (%q), want interrupted, killed by operator", r.Outcome, r.Reason)
	}
	_ = syscall.Kill(next.pid(), syscall.SIGTERM)
	next.wait(15 * time.Second)
}

// TestE2EAdoptedRunIsReplaced: overlap replace treats an adopted run as
// the daemon's own: the next fire ends it (recorded replaced, once) and
// runs.
func TestE2EAdoptedRunIsReplaced(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	arg := sleepArg("41.4")
	s := newSandbox(t, `shutdown_grace: 1s
jobs:
  - {name: fresh, schedule: "*/3 * * * * *", overlap: replace, command: "sleep `+arg+`", timeout: 1m, kill_grace: 2s}
`)
	t.Cleanup(func() { killCmdline(arg) })
	runID, _ := s.killDaemonInto(0)
	next := s.startDaemon()
	r := s.recordOf(runID, 10*time.Second)
	if r.Outcome != run.Replaced {
		t.Errorf("adopted run under replace: recorded %s (%q), want replaced", r.Outcome, r.Reason)
	}
	waitFor(t, 10*time.Second, "the replacing run started", func() bool {
		for id, rr := range s.runsByID() {
			if id != runID && rr.Outcome == run.Running {
				return true
			}
		}
		return false
	})
	_ = syscall.Kill(next.pid(), syscall.SIGTERM)
	next.wait(15 * time.Second)
}

// TestE2EAdoptedRunLogsFollow: `logs -f` of an adopted run prints the
// lines its keeper wrote to its log after its supervisor died, and ends
// when the run does.
func TestE2EAdoptedRunLogsFollow(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	s := newSandbox(t, `shutdown_grace: 1s
jobs:
  - {name: chatty, schedule: "@every 1h", command: "for i in $(seq 1 15); do echo line $i; sleep 0.2; done", timeout: 1m}
`)
	code, out, errOut := s.runCV(10*time.Second, "validate")
	if code != 0 {
		t.Fatalf("validate: %d %s%s", code, out, errOut)
	}
	d := s.cv("daemon", "--log-format", "json")
	waitFor(t, 10*time.Second, "daemon start", func() bool { return strings.Contains(d.stderr(), "cronvisor started") })
	if code, _, errOut := s.runCV(10*time.Second, "trigger", "chatty"); code != 0 {
		t.Fatalf("trigger: %s", errOut)
	}
	waitFor(t, 10*time.Second, "run started", func() bool { return strings.Contains(d.stderr(), `"msg":"run started"`) })
	time.Sleep(500 * time.Millisecond)
	_ = syscall.Kill(-d.pid(), syscall.SIGKILL)
	d.wait(5 * time.Second)
	next := s.startDaemon()
	code, out, errOut = s.runCV(20*time.Second, "logs", "-f", "chatty")
	if code != 0 {
		t.Fatalf("logs -f: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "stdout | line 15") || !strings.Contains(out, "stdout | line 1\n") {
		t.Errorf("logs -f of the adopted run printed:\n%s\nwant lines 1 to 15", out)
	}
	if n := strings.Count(out, "stdout | line 14\n"); n != 1 {
		t.Errorf("line 14 printed %d times:\n%s", n, out)
	}
	_ = syscall.Kill(next.pid(), syscall.SIGTERM)
	next.wait(15 * time.Second)
}
