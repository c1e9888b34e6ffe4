package e2e

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/ctl"
)

// TestConsoleShowsASavedLog drives `cronvisor ui` against a daemon: a past
// run's saved log comes through the control socket, stdout and stderr told
// apart; with the daemon gone, the same log is read from the state dir.
func TestConsoleShowsASavedLog(t *testing.T) {
	fullSuiteOnly(t)
	s := newSandbox(t, `jobs:
  - name: talk
    schedule: "@yearly"
    command: echo out-line; echo err-line >&2
    timeout: 30s
`)
	d := s.startDaemon()
	if _, err := s.client().RunNow(context.Background(), "talk", ctl.FireOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the run's record", func() bool {
		recs := s.historyJSON("--job", "talk")
		return len(recs) == 1 && recs[0].Outcome == "ok"
	})
	tm := startTmux(t, s, 100, 30, cvBin, "--config", s.config, "ui")
	tm.await(10*time.Second, "the jobs table", func(sc string) bool { return strings.Contains(sc, "talk") })
	tm.keys("Enter")
	tm.await(10*time.Second, "the detail with its run", func(sc string) bool { return strings.Contains(sc, "● ok ") })
	tm.keys("Down")
	saved := func(sc string) bool {
		return strings.Contains(sc, "── run ") && strings.Contains(sc, "  out-line") && strings.Contains(sc, "! err-line")
	}
	screen := tm.await(10*time.Second, "the saved log from the daemon", saved)
	t.Logf("the saved log:\n%s", screen)

	_ = syscall.Kill(d.pid(), syscall.SIGKILL)
	d.wait(10 * time.Second)
	tm.await(20*time.Second, "the state dir's reading", func(sc string) bool { return strings.Contains(sc, "read from the state dir at") })
	tm.keys("Up")
	tm.await(5*time.Second, "the live output", func(sc string) bool { return strings.Contains(sc, "live output") })
	tm.keys("Down")
	tm.await(10*time.Second, "the saved log from the state dir", saved)
	tm.keys("q")
	waitFor(t, 10*time.Second, "the console to exit", tm.dead)
}
