package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	// outputRunRE is the detail's output title of a picked run.
	outputRunRE = regexp.MustCompile(`── run (\d{8}T\d{6}-[0-9a-f]{8}) ─`)
	// outputBodyRE is the line the job below prints: its own run id.
	outputBodyRE = regexp.MustCompile(`(?m)^\s+own run (\d{8}T\d{6}-[0-9a-f]{8})\s*$`)
	// entryRE is the runs list's counter: the selected entry of all.
	entryRE = regexp.MustCompile(`(\d+) of (\d+)`)
)

// selectedEntry is the detail's counter: which entry is selected, of how
// many; zeros when it is not on screen.
func selectedEntry(screen string) (sel, of int) {
	m := entryRE.FindStringSubmatch(screen)
	if m == nil {
		return 0, 0
	}
	sel, _ = strconv.Atoi(m[1])
	of, _ = strconv.Atoi(m[2])
	return sel, of
}

// TestConsoleSelectionHoldsUnderFire is issue 25's done-when: in the
// detail of a job firing every second, `send-keys j j j` (one write,
// which the terminal delivers in one read) moves three entries, and for
// 20 s the selected run stays selected: the output's title and the
// output itself (the job prints its own run id) name it, while the new
// runs push it down the list.
func TestConsoleSelectionHoldsUnderFire(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test: runs in the full suite")
	}
	t.Parallel()
	s := newSandbox(t, `jobs:
  - name: tick
    schedule: "@every 1s"
    command: echo "own run $CRONVISOR_RUN_ID"
    timeout: 10s
`)
	d := s.startDaemon()
	tm := startTmux(t, s, 120, 40, cvBin, "--config", s.config, "ui")
	tm.await(10*time.Second, "the jobs table", func(sc string) bool { return strings.Contains(sc, "tick") })
	tm.keys("Enter")
	tm.await(15*time.Second, "five runs in the detail", func(sc string) bool {
		_, of := selectedEntry(sc)
		return strings.Contains(sc, "── runs and skips") && of >= 6
	})
	if out, err := tm.run("send-keys", "-t", "cv", "j", "j", "j"); err != nil {
		t.Fatalf("tmux send-keys j j j: %v: %s", err, out)
	}
	var id string
	screen := tm.await(5*time.Second, "the fourth entry picked, its log shown", func(sc string) bool {
		title, body := outputRunRE.FindStringSubmatch(sc), outputBodyRE.FindStringSubmatch(sc)
		if title == nil || body == nil || title[1] != body[1] {
			return false
		}
		id = title[1]
		return true
	})
	sel, _ := selectedEntry(screen)
	if sel < 4 {
		t.Fatalf("j j j selected entry %d, want the fourth (or lower, pushed by new runs):\n%s", sel, screen)
	}
	t.Logf("j j j picked run %s, entry %d:\n%s", id, sel, screen)

	lastSel, moved := sel, 0
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		sc := tm.screen()
		title, body := outputRunRE.FindStringSubmatch(sc), outputBodyRE.FindStringSubmatch(sc)
		if title == nil || title[1] != id {
			t.Fatalf("the selected run changed by itself from %s:\n%s", id, sc)
		}
		if body == nil || body[1] != id {
			t.Fatalf("the output under run %s's title is not its log:\n%s", id, sc)
		}
		if sel, _ := selectedEntry(sc); sel > lastSel {
			moved, lastSel = moved+sel-lastSel, sel
		} else if sel < lastSel {
			t.Fatalf("the selection moved up from entry %d to %d:\n%s", lastSel, sel, sc)
		}
	}
	if moved < 10 {
		t.Errorf("in 20 s of fires every second the selected run moved down %d entries, want about 20", moved)
	}
	tm.keys("q")
	waitFor(t, 10*time.Second, "the console to exit", tm.dead)
	stopDaemons(t, d)
}

// TestConsoleReadOnlyAndCommands (issue 25, point 7): `cronvisor ui
// --read-only` refuses the keys and commands that change anything, and
// offers none in its help; `:` commands switch the views.
func TestConsoleReadOnlyAndCommands(t *testing.T) {
	fullSuiteOnly(t)
	s := newSandbox(t, `jobs:
  - name: idle
    schedule: "@yearly"
    command: "true"
    timeout: 10s
`)
	d := s.startDaemon()
	tm := startTmux(t, s, 120, 40, cvBin, "--config", s.config, "ui", "--read-only")
	tm.await(10*time.Second, "the jobs table", func(sc string) bool { return strings.Contains(sc, "· read-only") })
	tm.keys("p")
	tm.await(5*time.Second, "p refused", func(sc string) bool { return strings.Contains(sc, "read-only console: pause/resume is off") })
	tm.keys(":pause idle", "Enter")
	tm.await(5*time.Second, ":pause refused", func(sc string) bool { return strings.Contains(sc, "read-only console: :pause is off") })
	tm.keys("?")
	help := tm.await(5*time.Second, "the full help", func(sc string) bool { return strings.Contains(sc, "back/close") })
	for _, gone := range []string{"run now", "pause", "kill", "reload config"} {
		if strings.Contains(help[strings.Index(help, "JOB ▾"):], " "+gone) {
			t.Errorf("the read-only help offers %q:\n%s", gone, help)
		}
	}
	tm.keys("Escape", ":locks", "Enter")
	tm.await(5*time.Second, "the locks tab", func(sc string) bool { return strings.Contains(sc, "[Locks]") })
	tm.keys("3")
	tm.await(5*time.Second, "the history tab", func(sc string) bool { return strings.Contains(sc, "[History]") })
	tm.keys(":q", "Enter")
	waitFor(t, 10*time.Second, "the console to exit", tm.dead)
	code, out, _ := s.runCV(10*time.Second, "status")
	if code != 0 || strings.Contains(lineWith(out, "idle"), "paused") {
		t.Errorf("status after the read-only console (exit %d):\n%s", code, out)
	}
	stopDaemons(t, d)
}
