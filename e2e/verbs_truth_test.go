package e2e

import (
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// heldJobs: held is paused by the test, off is enabled: false, stubborn
// ignores SIGTERM so that only the SIGKILL at its kill_grace's end ends
// it. None fires by itself (1 January at midnight).
const heldJobs = `jobs:
  - name: held
    schedule: "0 0 1 1 *"
    command: "echo ran"
    timeout: 30s
  - name: off
    schedule: "0 0 1 1 *"
    command: "echo ran"
    timeout: 30s
    enabled: false
  - name: stubborn
    schedule: "0 0 1 1 *"
    command: "trap '' TERM; sleep %s"
    timeout: 60s
    kill_grace: 3s
`

// expectCV runs the CLI and wants its exit code and fragments of its
// stdout and stderr; it returns both.
func (s *sandbox) expectCV(code int, wantOut, wantErr []string, args ...string) (string, string) {
	s.t.Helper()
	got, out, stderr := s.runCV(20*time.Second, args...)
	ok := got == code
	for _, w := range wantOut {
		ok = ok && strings.Contains(out, w)
	}
	for _, w := range wantErr {
		ok = ok && strings.Contains(stderr, w)
	}
	if !ok {
		s.t.Fatalf("%v: exit %d (want %d)\nstdout %q (want %q)\nstderr %q (want %q)", args, got, code, out, wantOut, stderr, wantErr)
	}
	return out, stderr
}

// TestE2ETriggerRefusesHeldJobs: a trigger of a paused job, and of one
// with enabled: false, is refused with exit 1, one line and the --force
// hint, and fires nothing; with --force it runs once, says on stderr what
// it went past, and the job stays paused or disabled. A kill of a job
// with nothing running exits 1.
func TestE2ETriggerRefusesHeldJobs(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, strings.Replace(heldJobs, "%s", sleepArg("42.1"), 1))
	d := s.startDaemon()
	s.expectCV(0, []string{"paused held\n"}, nil, "pause", "held")
	for _, tt := range []struct{ job, hold, stays string }{
		{"held", "the job is paused (by ", "it stays paused"},
		{"off", "the job is disabled (enabled: false in jobs.yaml)", "it stays disabled"},
	} {
		_, stderr := s.expectCV(1, nil, []string{"cronvisor: trigger " + tt.job + ": refused: " + tt.hold, "; use --force to run it anyway"}, "trigger", tt.job)
		if n := len(lines(stderr)); n != 1 {
			t.Errorf("trigger %s refused: %d lines on stderr, want one: %q", tt.job, n, stderr)
		}
		if recs := s.historyJSON("--job", tt.job); len(recs) != 0 {
			t.Errorf("trigger %s refused, yet history has %+v", tt.job, recs)
		}
		out, _ := s.expectCV(0, []string{"triggered " + tt.job + ": run "}, []string{"trigger " + tt.job + ": --force: fired although " + tt.hold, tt.stays}, "trigger", tt.job, "--force")
		runID := strings.Fields(out)[3]
		if r := s.recordOf(runID, 10*time.Second); r.Outcome != run.OK {
			t.Errorf("forced trigger of %s: recorded %+v, want ok", tt.job, r)
		}
	}
	st := map[string]string{}
	for _, j := range []string{"held", "off"} {
		st[j] = s.statusOf(j).State
	}
	if st["held"] != "paused" || st["off"] != "disabled" {
		t.Errorf("after the forced runs: states %v, want held paused, off disabled", st)
	}
	s.expectCV(1, nil, []string{"cronvisor: kill held: nothing to kill: no run of held is running"}, "kill", "held")
	stopDaemons(t, d)
}

var (
	alreadyRE  = regexp.MustCompile(`^kill stubborn: run (\S+) is already being ended \(signalled at \d\d:\d\d:\d\d\); SIGKILL due at \d\d:\d\d:\d\d, in [1-3]s\n$`)
	signalleRE = regexp.MustCompile(`^killed stubborn: 1 run signalled: ending within [23]s \(SIGKILL due at \d\d:\d\d:\d\d\)\n$`)
)

// TestE2EKillTellsTheTruth: a run that traps SIGTERM, kill_grace 3s,
// answers kill truthfully at every moment: the first kill waits for the
// SIGKILL at the grace's end and says the run ended (interrupted); a
// second kill meanwhile says at once that it is already being ended and
// when SIGKILL falls; a kill after the end exits 1. kill --no-wait
// says the run is signalled and when it will end.
func TestE2EKillTellsTheTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: real kill_grace waits; runs in the full suite")
	}
	t.Parallel()
	arg := sleepArg("42.2")
	s := newSandbox(t, strings.Replace(heldJobs, "%s", arg, 1))
	t.Cleanup(func() { killCmdline(arg) })
	d := s.startDaemon()

	out, _ := s.expectCV(0, []string{"triggered stubborn: run "}, nil, "trigger", "stubborn")
	runID := strings.Fields(out)[3]
	first := s.cv("kill", "stubborn")
	time.Sleep(time.Second) // into the grace
	t0 := time.Now()
	out, _ = s.expectCV(0, nil, nil, "kill", "stubborn")
	if m := alreadyRE.FindStringSubmatch(out); m == nil || m[1] != runID || time.Since(t0) > 1500*time.Millisecond {
		t.Errorf("second kill during the grace, after %v: %q; want at once that run %s is already being ended", time.Since(t0), out, runID)
	}
	if code := first.wait(15 * time.Second); code != 0 || first.stdout() != "killed stubborn: 1 run ended (interrupted)\n" {
		t.Errorf("first kill: exit %d, stdout %q, stderr %q; want the run ended (interrupted)", code, first.stdout(), first.stderr())
	}
	t.Logf("first kill answered after %v (kill_grace 3s)", first.elapsed().Round(time.Millisecond))
	if took := first.elapsed(); took < 2500*time.Millisecond || took > 9*time.Second {
		t.Errorf("first kill answered after %v; want once SIGKILL ended the run, 3 s after its SIGTERM", took)
	}
	if r := s.recordOf(runID, 5*time.Second); r.Outcome != run.Interrupted || r.Reason != "killed by operator" {
		t.Errorf("killed run recorded %s (%q), want interrupted, killed by operator", r.Outcome, r.Reason)
	}
	s.expectCV(1, nil, []string{"kill stubborn: nothing to kill: no run of stubborn is running"}, "kill", "stubborn")

	out, _ = s.expectCV(0, []string{"triggered stubborn: run "}, nil, "trigger", "stubborn")
	runID = strings.Fields(out)[3]
	out, _ = s.expectCV(0, nil, nil, "kill", "stubborn", "--no-wait")
	if !signalleRE.MatchString(out) {
		t.Errorf("kill --no-wait: %q, want the run signalled, ending within 3s", out)
	}
	if r := s.recordOf(runID, 10*time.Second); r.Outcome != run.Interrupted {
		t.Errorf("run killed without waiting: recorded %s, want interrupted", r.Outcome)
	}
	s.expectCV(1, nil, []string{"nothing to kill"}, "kill", "stubborn")
	stopDaemons(t, d)
}

// TestE2EKillAdoptedRunTellsTheTruth: the same for a run whose daemon
// was SIGKILLed, adopted by the next daemon and ended by its keeper.
func TestE2EKillAdoptedRunTellsTheTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: real kill_grace waits; runs in the full suite")
	}
	t.Parallel()
	arg := sleepArg("42.3")
	s := newSandbox(t, strings.Replace(heldJobs, "%s", arg, 1))
	t.Cleanup(func() { killCmdline(arg) })
	d := s.startDaemon()
	out, _ := s.expectCV(0, []string{"triggered stubborn: run "}, nil, "trigger", "stubborn")
	runID := strings.Fields(out)[3]
	_ = syscall.Kill(-d.pid(), syscall.SIGKILL)
	d.wait(5 * time.Second)
	next := s.startDaemon()
	waitFor(t, 10*time.Second, "the run shown adopted", func() bool { return s.statusOf("stubborn").Adopted })

	first := s.cv("kill", "stubborn")
	time.Sleep(time.Second)
	out, _ = s.expectCV(0, nil, nil, "kill", "stubborn")
	if want := "kill stubborn: adopted run " + runID + " is already being ended"; !strings.HasPrefix(out, want) {
		t.Errorf("second kill of the adopted run: %q, want %q…", out, want)
	}
	code := first.wait(15 * time.Second)
	t.Logf("first kill of the adopted run answered after %v (kill_grace 3s)", first.elapsed().Round(time.Millisecond))
	if code != 0 || first.stdout() != "killed stubborn: 1 adopted run ended (interrupted)\n" {
		t.Errorf("first kill: exit %d, stdout %q, stderr %q; want the adopted run ended (interrupted)", code, first.stdout(), first.stderr())
	}
	if r := s.recordOf(runID, 5*time.Second); r.Outcome != run.Interrupted || !strings.Contains(r.Reason, "killed by operator") {
		t.Errorf("adopted run killed: recorded %s (%q), want interrupted, killed by operator", r.Outcome, r.Reason)
	}
	s.expectCV(1, nil, []string{"nothing to kill"}, "kill", "stubborn")
	stopDaemons(t, next)
}

// TestConsoleAsksBeforeAForcedRun drives `cronvisor ui` in tmux: r on a
// paused job asks first and runs nothing on no; on yes it runs once, the
// daemon's forced fire, and the job stays paused. x on a running
// TERM-trapping job, confirmed, says what `cronvisor kill` says.
func TestConsoleAsksBeforeAForcedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a console in tmux and a real kill_grace; runs in the full suite")
	}
	t.Parallel()
	arg := sleepArg("42.4")
	s := newSandbox(t, strings.Replace(heldJobs, "%s", arg, 1))
	t.Cleanup(func() { killCmdline(arg) })
	d := s.startDaemon()
	s.expectCV(0, []string{"paused held\n"}, nil, "pause", "held")
	tm := startTmux(t, s, 120, 30, cvBin, "--config", s.config, "ui")
	tm.await(10*time.Second, "the jobs table", func(sc string) bool { return strings.Contains(sc, "stubborn") })
	tm.keys(":run held", "Enter")
	tm.await(10*time.Second, "the question", func(sc string) bool {
		return strings.Contains(sc, "Run held anyway, once? The job is paused (by ")
	})
	tm.keys("n")
	tm.await(5*time.Second, "cancelled", func(sc string) bool { return strings.Contains(sc, "cancelled") })
	if recs := s.historyJSON("--job", "held"); len(recs) != 0 {
		t.Fatalf("no to the question, yet history has %+v", recs)
	}
	tm.keys(":run held", "Enter", "y")
	screen := tm.await(10*time.Second, "the forced run", func(sc string) bool {
		return strings.Contains(sc, "started run ") && strings.Contains(sc, " of held although the job is paused (by ")
	})
	t.Logf("after yes:\n%s", screen)
	waitFor(t, 10*time.Second, "the forced run recorded", func() bool {
		recs := s.historyJSON("--job", "held")
		return len(recs) == 1 && recs[0].Outcome == run.OK
	})
	if st := s.statusOf("held").State; st != "paused" {
		t.Errorf("after the forced run held is %s, want still paused", st)
	}

	s.expectCV(0, []string{"triggered stubborn: run "}, nil, "trigger", "stubborn")
	tm.await(10*time.Second, "stubborn running", func(sc string) bool { return strings.Contains(lineWith(sc, "stubborn"), "▶") })
	tm.keys(":kill stubborn", "Enter", "y")
	screen = tm.await(15*time.Second, "the kill's end", func(sc string) bool {
		return strings.Contains(sc, "killed stubborn: 1 run ended (interrupted)")
	})
	t.Logf("after the kill:\n%s", screen)
	tm.keys("q")
	waitFor(t, 10*time.Second, "the console to exit", tm.dead)
	stopDaemons(t, d)
}
