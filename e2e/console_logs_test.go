package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/ctl"
)

// TestConsoleLogSearch: in a real terminal, `/` finds a word in a past
// run's 10,000-line saved log, marks it (reverse video, read back from
// tmux with its escapes) and says which match of how many; `n` moves to
// the next one.
func TestConsoleLogSearch(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, `jobs:
  - name: chatty
    schedule: "@yearly"
    command: sh gen.sh
    timeout: 30s
`)
	gen := `awk 'BEGIN { for (i = 1; i <= 10000; i++) { s = sprintf("line %05d", i); if (i % 2500 == 0) s = s " needle"; print s } }'`
	if err := os.WriteFile(filepath.Join(s.dir, "gen.sh"), []byte(gen+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := s.startDaemon()
	if _, err := s.client().RunNow(context.Background(), "chatty", ctl.FireOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the run's record", func() bool {
		recs := s.historyJSON("--job", "chatty")
		return len(recs) == 1 && recs[0].Outcome == "ok"
	})
	tm := startTmux(t, s, 100, 30, cvBin, "--config", s.config, "ui")
	tm.await(10*time.Second, "the jobs table", func(sc string) bool { return strings.Contains(sc, "chatty") })
	tm.keys("Enter")
	tm.await(10*time.Second, "the detail with its run", func(sc string) bool { return strings.Contains(sc, "● ok ") })
	tm.keys("Down")
	tm.await(10*time.Second, "the saved log", func(sc string) bool { return strings.Contains(sc, "  line 00001") })
	tm.keys("/", "needle", "Enter")
	for _, want := range []struct{ state, line string }{{"/needle 1/4", "line 02500"}, {"/needle 2/4", "line 05000"}} {
		if want.line != "line 02500" {
			tm.keys("n")
		}
		tm.await(10*time.Second, want.state, func(sc string) bool {
			return strings.Contains(sc, want.state) && strings.Contains(sc, want.line+" needle")
		})
		if sgr := markOf(tm.screenEsc(), want.line+" "); !sgrHas(sgr, 7) || !sgrHas(sgr, 1) {
			t.Errorf("at %s, %q is not drawn reversed and bold: its attributes are %v", want.state, want.line+" needle", sgr)
		}
	}
	quitAndStop(t, tm, d)
}

// quitAndStop quits the console, then stops the daemon.
func quitAndStop(t *testing.T, tm *tmuxTerm, d *proc) {
	t.Helper()
	tm.keys("q")
	waitFor(t, 10*time.Second, "the console to exit", tm.dead)
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	if code := d.wait(20 * time.Second); code != 0 {
		t.Errorf("daemon exit %d", code)
	}
}

// TestConsoleLogFollow: the live output follows its end; page up stops
// it, the lines on screen stay while new ones arrive (and are counted),
// and G follows again.
func TestConsoleLogFollow(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, `jobs:
  - name: ticker
    schedule: "@yearly"
    command: i=0; while [ $i -lt 1200 ]; do i=$((i+1)); echo "tick $i"; sleep 0.05; done
    timeout: 2m
`)
	d := s.startDaemon()
	tm := startTmux(t, s, 100, 30, cvBin, "--config", s.config, "ui")
	tm.await(10*time.Second, "the jobs table", func(sc string) bool { return strings.Contains(sc, "ticker") })
	tm.keys("Enter")
	tm.await(10*time.Second, "the detail", func(sc string) bool { return strings.Contains(sc, "live output") })
	if _, err := s.client().RunNow(context.Background(), "ticker", ctl.FireOptions{}); err != nil {
		t.Fatal(err)
	}
	tm.await(20*time.Second, "the output following past tick 40", func(sc string) bool {
		return strings.Contains(sc, "following") && lastTick(sc) > 40
	})
	tm.keys("PPage")
	paused := tm.await(10*time.Second, "the pause said", func(sc string) bool { return strings.Contains(sc, "paused — G to follow") })
	tm.await(20*time.Second, "20 new lines counted", func(sc string) bool { return newLines(sc) >= 20 })
	later := tm.screen()
	if a, b := logPane(paused), logPane(later); a == "" || a != b {
		t.Errorf("the paused pane moved while lines arrived:\nbefore:\n%s\nafter:\n%s", a, b)
	}
	tm.keys("G")
	tm.await(10*time.Second, "following again, at the newest line", func(sc string) bool {
		return strings.Contains(sc, "following") && lastTick(sc) > lastTick(later)+15
	})
	if code, _, errOut := s.runCV(20*time.Second, "kill", "ticker"); code != 0 {
		t.Errorf("kill: exit %d: %s", code, errOut)
	}
	quitAndStop(t, tm, d)
}

// screenEsc is the pane's text now with its colours and attributes, as
// escape sequences.
func (tm *tmuxTerm) screenEsc() string {
	tm.t.Helper()
	out, err := tm.run("capture-pane", "-p", "-e", "-t", "cv")
	if err != nil {
		tm.t.Fatalf("tmux capture-pane -e: %v: %s", err, out)
	}
	return out
}

var sgrRE = regexp.MustCompile(`\x1b\[([0-9;]*)m`)

// markOf is the SGR parameters in effect where the text after prefix
// starts, on the line holding prefix: those since the last reset.
func markOf(screen, prefix string) []int {
	for _, l := range strings.Split(screen, "\n") {
		i := strings.Index(l, prefix)
		if i < 0 {
			continue
		}
		between, _, found := strings.Cut(l[i+len(prefix):], "needle")
		if !found {
			return nil
		}
		var on []int
		for _, m := range sgrRE.FindAllStringSubmatch(between, -1) {
			on = sgrParams(on, m[1])
		}
		return on
	}
	return nil
}

// sgrParams adds one SGR's parameters to on, a reset emptying it; a
// colour's own numbers (38;5;N, 48;2;R;G;B) are not attributes.
func sgrParams(on []int, params string) []int {
	ps := strings.Split(params, ";")
	for k := 0; k < len(ps); k++ {
		n, _ := strconv.Atoi(ps[k])
		switch {
		case n == 0:
			on = on[:0]
		case (n == 38 || n == 48 || n == 58) && k+1 < len(ps) && ps[k+1] == "5":
			k += 2
		case (n == 38 || n == 48 || n == 58) && k+1 < len(ps) && ps[k+1] == "2":
			k += 4
		default:
			on = append(on, n)
		}
	}
	return on
}

func sgrHas(on []int, n int) bool {
	for _, x := range on {
		if x == n {
			return true
		}
	}
	return false
}

var (
	tickRE     = regexp.MustCompile(`(?m)^\s+tick (\d+)\s*$`)
	newLinesRE = regexp.MustCompile(`G to follow, (\d+) new lines?`)
)

// lastTick is the highest "tick N" on the screen.
func lastTick(screen string) int {
	n := 0
	for _, m := range tickRE.FindAllStringSubmatch(screen, -1) {
		k, _ := strconv.Atoi(m[1])
		n = max(n, k)
	}
	return n
}

func newLines(screen string) int { return firstInt(newLinesRE, screen) }

// logPane is the output pane's rows: the lines after its title.
func logPane(screen string) string {
	_, rest, _ := strings.Cut(screen, "── live output")
	_, rest, _ = strings.Cut(rest, "\n")
	return strings.Join(tickRE.FindAllString(rest, -1), "\n")
}
