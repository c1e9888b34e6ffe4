package e2e

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var (
	skipPIDRE   = regexp.MustCompile(`skipped \S+ ago: held by pid (\d+)@`)
	ownHolderRE = regexp.MustCompile(`(\d+)@\S+ own`)
	listSkipRE  = regexp.MustCompile(`○ skipped .* held by pid (\d+)@`)
)

// TestConsoleShowsWhoHoldsTheLock runs `cronvisor` in a terminal, which
// schedules in-process with the console on top, on a job that overlaps
// itself: every fire during a run is skipped. The console must show the
// run, then the skip naming the pid that holds the lock, the same pid the
// lock file names; then quitting must ask, and end the run.
func TestConsoleShowsWhoHoldsTheLock(t *testing.T) {
	fullSuiteOnly(t)
	s := newSandbox(t, `jobs:
  - name: overlap
    schedule: "@every 1s"
    command: sleep 2.5
    timeout: 10s
`)
	tm := startTmux(t, s, 100, 30, cvBin, "--config", s.config)
	lockFile := filepath.Join(s.state, "locks", "overlap.lock")

	tm.await(10*time.Second, "the job running", func(sc string) bool {
		return strings.Contains(sc, "overlap") && runningPIDRE.MatchString(sc)
	})

	// A run lasts 2.5 s of every 3 s, and the fires in between are skipped:
	// wait for a screen that shows a run and a skip by the same pid, and
	// the lock file naming that pid (which changes with the next run).
	var pid int
	screen := tm.await(10*time.Second, "a skip naming the running pid", func(sc string) bool {
		run, skip, holder := firstInt(runningPIDRE, sc), firstInt(skipPIDRE, sc), firstInt(ownHolderRE, sc)
		pid = recordPID(t, lockFile)
		return run != 0 && run == skip && run == holder && run == pid
	})
	t.Logf("pid %d holds the lock; the console:\n%s", pid, screen)

	// The job's detail lists the skips from the history, each with its
	// holder's pid: one of them must be a pid that held the lock.
	tm.keys("Enter")
	tm.await(10*time.Second, "the detail listing a skip with its holder", func(sc string) bool {
		return strings.Contains(sc, "── runs and skips") && firstInt(listSkipRE, sc) != 0
	})
	tm.keys("Escape")

	// Quitting an in-process scheduler while a run lives asks first.
	tm.await(5*time.Second, "the job running again", func(sc string) bool {
		return strings.Contains(sc, "[Jobs]") && runningPIDRE.MatchString(sc)
	})
	tm.keys("q")
	tm.await(5*time.Second, "the quit question", func(sc string) bool {
		return strings.Contains(sc, "quit and end it? y/n") || tm.dead()
	})
	if !tm.dead() {
		tm.keys("y")
	}
	waitFor(t, 10*time.Second, "cronvisor to exit", tm.dead)
}
