package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// everyTenFor25 is a job fired every 10 s whose runs take 25 s: each run
// skips the two fires that come while it runs.
const everyTenFor25 = `jobs:
  - name: every10
    schedule: "*/10 * * * * *"
    command: sleep 25
    overlap: skip
    timeout: 1m
`

// TestConsoleTimeline is issue 43's timeline in a real terminal: a job
// fired every 10 s whose runs take 25 s shows, in the 5-minute window,
// each finished run as one bar with its two skipped fires marked on it
// at their slots' columns (within one cell), and the running run as a
// bar that grows from one capture to the next.
func TestConsoleTimeline(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, everyTenFor25)
	d := s.startDaemon()
	tm := startTmux(t, s, 160, 20, cvBin, "--config", s.config, "ui")
	tm.await(10*time.Second, "the jobs table", func(sc string) bool { return strings.Contains(sc, "every10") })
	tm.keys("4", "0") // the timeline, its 5-minute window
	tm.await(10*time.Second, "the timeline", func(sc string) bool { return strings.Contains(sc, "timeline · 5 min") })

	var screen string
	var ran, skips = finishedWithSkips(nil)
	tm.await(90*time.Second, "a 25-s run and its two skips on the timeline", func(sc string) bool {
		screen = sc
		ran, skips = finishedWithSkips(s.historyJSON("--job", "every10"))
		return len(skips) == 2 && strings.Contains(lineWith(sc, " every10 "), "●")
	})
	t.Logf("the timeline:\n%s", screen)
	checkBar(t, screen, ran, skips)

	first, firstSince := runningBar(t, tm)
	time.Sleep(5 * time.Second)
	second, secondSince := runningBar(t, tm)
	if firstSince != secondSince && secondSince != "" {
		// A run ended between the captures: compare two of the next run's.
		first, firstSince = second, secondSince
		time.Sleep(5 * time.Second)
		second, secondSince = runningBar(t, tm)
	}
	if firstSince != secondSince || second <= first {
		t.Errorf("the running bar did not grow: %d columns (run since %s), then %d (run since %s)\n%s",
			first, firstSince, second, secondSince, tm.screen())
	}

	if out, err := tm.run("send-keys", "-t", "cv", "q"); err != nil {
		t.Fatalf("tmux send-keys q: %v: %s", err, out)
	}
	for _, verb := range []string{"pause", "kill"} { // no fire after the run, which ends now: the daemon stops at once
		if code, _, errOut := s.runCV(20*time.Second, verb, "every10"); code != 0 {
			t.Errorf("%s: exit %d: %s", verb, code, errOut)
		}
	}
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	if code := d.wait(20 * time.Second); code != 0 {
		t.Errorf("daemon exit %d", code)
	}
}
