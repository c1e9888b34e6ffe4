package e2e

import (
	"encoding/json"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// beatingJob is a job that beats every 0.5 s for 5 s through the built
// binary (`cronvisor heartbeat --progress I/10`), writing to
// beats.RUN_ID the time just before each beat (so that an end at least
// heartbeat_timeout after the beat is at least that after the time
// written), then stops beating and sleeps arg.
func beatingJob(arg string) string {
	return `jobs:
  - name: beater
    schedule: "* * * * * *"
    timeout: 1m
    kill_grace: 1s
    heartbeat_timeout: 2s
    command: 'for i in 1 2 3 4 5 6 7 8 9 10; do date +%s.%N >>beats.$CRONVISOR_RUN_ID; ` +
		cvBin + ` heartbeat --progress "$i/10" || exit 9; sleep 0.5; done; exec sleep ` + arg + `'
`
}

// startBeater starts a daemon on a sandbox of beatingJob and waits for
// its run's start: the daemon, the run's id and its sleep's argument.
func startBeater(t *testing.T, sleepBase string) (*sandbox, *proc, string, string) {
	t.Helper()
	arg := sleepArg(sleepBase)
	s := newSandbox(t, beatingJob(arg))
	t.Cleanup(func() { killCmdline(arg) })
	d := s.cv("daemon", "--log-format", "json")
	waitFor(t, 10*time.Second, "run started", func() bool { return strings.Contains(d.stderr(), `"msg":"run started"`) })
	return s, d, runIDOf(t, d.stderr(), "run started"), arg
}

// beatTimes reads the times of the beats the job wrote down for runID.
func (s *sandbox) beatTimes(runID string) []time.Time {
	s.t.Helper()
	var out []time.Time
	for _, ln := range lines(readFile(s.t, s.dir+"/beats."+runID)) {
		out = append(out, parseUnix(s.t, ln))
	}
	return out
}

// checkSilenceEnd holds r, the record of a run that stopped beating, to
// the rules: timeout, "no heartbeat for 2s", its last progress, ended
// about 2 s after its last beat.
func (s *sandbox) checkSilenceEnd(r run.Record, beats []time.Time) {
	t := s.t
	t.Helper()
	if r.Outcome != run.Timeout || r.Reason != "no heartbeat for 2s" {
		t.Errorf("recorded %s (%q), want timeout, no heartbeat for 2s", r.Outcome, r.Reason)
	}
	if r.Progress != "10/10" {
		t.Errorf("progress %q in the record, want 10/10", r.Progress)
	}
	if len(beats) != 10 {
		t.Fatalf("the job wrote down %d beats, want 10", len(beats))
	}
	after := r.EndedAt.Sub(beats[len(beats)-1])
	t.Logf("ended %v after the last beat", after.Round(time.Millisecond))
	if after < 1800*time.Millisecond || after > 3500*time.Millisecond {
		t.Errorf("ended %v after the last beat, want 1.8-3.5 s (heartbeat_timeout 2s)", after)
	}
}

// TestE2EHeartbeatEndsASilentRun: a run that beats every 0.5 s for 5 s
// and then sleeps is ended by its daemon about heartbeat_timeout after
// its last beat, recorded timeout, "no heartbeat for 2s", with its last
// progress; while it ran, status --json showed its progress.
func TestE2EHeartbeatEndsASilentRun(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	s, d, runID, _ := startBeater(t, "30.5")
	progress := regexp.MustCompile(`^([1-9]|10)/10$`)
	var seen ctl.JobStatus
	waitFor(t, 8*time.Second, "progress in status --json", func() bool {
		code, out, _ := s.runCV(10*time.Second, "status", "--json", "beater")
		if code != 0 || json.Unmarshal([]byte(out), &seen) != nil {
			return false
		}
		return seen.RunID == runID && progress.MatchString(seen.Progress) && !seen.LastBeatAt.IsZero()
	})
	t.Logf("status: progress %q, last beat %v", seen.Progress, seen.LastBeatAt)
	r := s.recordOf(runID, 20*time.Second)
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	d.wait(15 * time.Second)
	s.checkSilenceEnd(r, s.beatTimes(runID))
	if r.ExitCode == nil || *r.ExitCode != 143 {
		t.Errorf("exit code %v, want 143 (SIGTERM)", r.ExitCode)
	}
}

// TestE2EKeeperEndsASilentRun: the same run, its daemon SIGKILLed after
// its second beat: the keeper reads the beats that follow and ends the
// run about heartbeat_timeout after the last one; the next daemon's
// recovery records it timeout, "no heartbeat for 2s", with the progress
// the keeper read.
func TestE2EKeeperEndsASilentRun(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	s, d, runID, arg := startBeater(t, "30.6")
	// The third time written: the second beat is done.
	waitFor(t, 10*time.Second, "two beats", func() bool { return len(lines(readFile(t, s.dir+"/beats."+runID))) >= 3 })
	_ = syscall.Kill(-d.pid(), syscall.SIGKILL)
	d.wait(5 * time.Second)
	waitFor(t, 20*time.Second, "the run's end", func() bool { return sleeps(arg) == 0 && len(s.beatTimes(runID)) == 10 })
	gone := time.Now()
	beats := s.beatTimes(runID)
	if after := gone.Sub(beats[len(beats)-1]); after > 4*time.Second {
		t.Errorf("the run was gone %v after its last beat, want about 2 s", after)
	}
	d2 := s.startDaemon()
	r := s.recordOf(runID, 10*time.Second)
	_ = syscall.Kill(d2.pid(), syscall.SIGTERM)
	d2.wait(15 * time.Second)
	s.checkSilenceEnd(r, beats)
}

// TestE2EHeartbeatOutsideARun: `cronvisor heartbeat` outside a run exits
// 1 and names the variable it lacks.
func TestE2EHeartbeatOutsideARun(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, "jobs: []\n")
	code, _, stderr := s.runCV(10*time.Second, "heartbeat", "--progress", "x")
	if code != 1 || !strings.Contains(stderr, "CRONVISOR_HEARTBEAT_FD is not set") {
		t.Errorf("exit %d, stderr %q; want 1 naming CRONVISOR_HEARTBEAT_FD", code, stderr)
	}
}
