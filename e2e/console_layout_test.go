package e2e

import (
	"strings"
	"testing"
	"time"
)

// burstJobs fire three records a second, so that the history grows past
// a screen's rows within seconds.
const burstJobs = `jobs:
  - {name: alpha, schedule: "@every 1s", command: "true", timeout: 10s}
  - {name: bravo, schedule: "@every 1s", command: "true", timeout: 10s}
  - {name: charlie, schedule: "@every 1s", command: "true", timeout: 10s}
`

// selectedRow is the index of the selected row ("›") among the rows
// under the table header that contains header; -1 when none is marked.
func selectedRow(screen, header string) int {
	row := -1
	for _, l := range strings.Split(screen, "\n") {
		switch {
		case row < 0 && strings.Contains(l, header):
			row = 0
		case row >= 0 && strings.HasPrefix(l, "›"):
			return row
		case row >= 0:
			row++
		}
	}
	return -1
}

// TestConsoleHistoryOpensAtTheNewestRow is issue 43's "History opens at
// the newest row": after the History tab was seen once and some 40
// records arrived while the Jobs tab was shown, History opens at the
// top with the newest record selected (it opened scrolled down, the
// newest rows hidden above); scrolled down, it says how many newer rows
// are above as they arrive.
func TestConsoleHistoryOpensAtTheNewestRow(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	s := newSandbox(t, burstJobs)
	d := s.startDaemon()
	defer stopDaemons(t, d)
	tm := startTmux(t, s, 80, 24, cvBin, "--config", s.config, "ui")
	tm.await(10*time.Second, "the jobs table", func(sc string) bool { return strings.Contains(sc, "charlie") })
	tm.keys("3")
	tm.await(10*time.Second, "the History tab with a record", func(sc string) bool { return selectedRow(sc, "TIME") >= 0 })
	tm.keys("1")
	before := len(s.historyLines())
	waitFor(t, 30*time.Second, "40 records more in the history", func() bool { return len(s.historyLines()) >= before+40 })
	tm.keys("3")
	screen := tm.await(5*time.Second, "the History tab", func(sc string) bool { return strings.Contains(sc, "[History]") })
	// The records of the moment since it opened are above the selection,
	// on screen: three a second.
	if row := selectedRow(screen, "TIME"); row < 0 || row > 6 || strings.Contains(screen, "newer") {
		t.Fatalf("History opened with row %d selected, want the newest (or one of the last second's), and no newer rows hidden above:\n%s", row, screen)
	}
	tm.keys("PageDown", "PageDown")
	tm.await(10*time.Second, "the newer rows above counted", func(sc string) bool { return strings.Contains(sc, " newer (g)") })
	tm.keys("g")
	tm.await(5*time.Second, "the newest row selected again", func(sc string) bool {
		return selectedRow(sc, "TIME") == 0 && !strings.Contains(sc, "newer")
	})
}

// TestConsoleClickSelects is issue 43's "Mouse: click selects": a left
// click (the SGR mouse report a terminal sends) on the third row of the
// jobs table selects it, and the summary under the table is its job's.
func TestConsoleClickSelects(t *testing.T) {
	fullSuiteOnly(t)
	s := newSandbox(t, strings.ReplaceAll(burstJobs, "@every 1s", "@hourly"))
	d := s.startDaemon()
	defer stopDaemons(t, d)
	tm := startTmux(t, s, 80, 24, cvBin, "--config", s.config, "ui")
	tm.await(10*time.Second, "the jobs table, alpha selected", func(sc string) bool {
		return selectedRow(sc, "JOB") == 0 && strings.Contains(sc, "charlie")
	})
	// The screen's line 4 (1-based): the header bar, the table's header,
	// alpha, bravo, then charlie. Press and release, at column 10.
	for _, report := range []string{"\x1b[<0;10;5M", "\x1b[<0;10;5m"} {
		if out, err := tm.run("send-keys", "-t", "cv", "-l", report); err != nil {
			t.Fatalf("tmux send-keys %q: %v: %s", report, err, out)
		}
	}
	tm.await(5*time.Second, "charlie selected by the click", func(sc string) bool {
		return selectedRow(sc, "JOB") == 2 && strings.Contains(sc, "\n charlie ")
	})
}

// TestConsoleHostsTab is issue 43's Hosts view in a real fleet: two
// daemons (host-a, host-b) share a history on PostgreSQL; the console
// attached to host-a offers the Hosts tab, and 5 lists both hosts up,
// host-a as this one, with their versions and clock offsets. A console
// of a daemon without a shared history has no such tab.
func TestConsoleHostsTab(t *testing.T) {
	fullSuiteOnly(t)
	pg := sharedSQLServer(t, "postgres")
	db, _ := pg.newDB(t)
	a, b := fleetHost(t, pg, db), fleetHost(t, pg, db)
	da, dbb := a.startHost("host-a"), b.startHost("host-b")
	defer stopDaemons(t, da, dbb)
	tm := startTmux(t, a, 120, 30, cvBin, "--config", a.config, "ui")
	tm.await(10*time.Second, "the Hosts tab in the header", func(sc string) bool {
		return strings.Contains(strings.SplitN(sc, "\n", 2)[0], " Hosts ")
	})
	tm.keys("5")
	screen := tm.await(10*time.Second, "both hosts up", func(sc string) bool {
		return strings.Contains(lineWith(sc, "host-a (this)"), "● up") && strings.Contains(lineWith(sc, "  host-b "), "● up")
	})
	for _, col := range []string{"HOST", "STATE", "VERSION", "LAST BEAT", "CLOCK", "RUNNING"} {
		if !strings.Contains(screen, col) {
			t.Errorf("the Hosts tab lacks its %s column:\n%s", col, screen)
		}
	}

	solo := newSandbox(t, fleetJobs)
	ds := solo.startDaemon()
	defer stopDaemons(t, ds)
	tm2 := startTmux(t, solo, 120, 30, cvBin, "--config", solo.config, "ui")
	tm2.await(10*time.Second, "the jobs table", func(sc string) bool { return strings.Contains(sc, "tock") })
	tm2.keys("5")
	screen = tm2.await(5*time.Second, "the refusal of 5", func(sc string) bool { return strings.Contains(sc, "history is its own") })
	if strings.Contains(strings.SplitN(screen, "\n", 2)[0], " Hosts ") {
		t.Errorf("a daemon with its own history offers a Hosts tab:\n%s", screen)
	}
}
