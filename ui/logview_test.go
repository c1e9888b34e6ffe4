package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// longLog is a saved log of n lines, "needle" on every 2,500th.
func longLog(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("stdout | line %05d", i+1)
		if (i+1)%2500 == 0 {
			lines[i] += " needle"
		}
	}
	return lines
}

// openRun opens sync_orders' detail on its past run r-sync-6, whose saved
// log is lines.
func openRun(t *testing.T, f *fakeSource, w, h int, lines []string) Model {
	t.Helper()
	f.logs = map[string][]string{"r-sync-6": lines}
	m := loaded(t, f, Options{}, w, h)
	m = openSync(t, m, f)
	m, cmd := press(m, "down", "down", "down")
	m, _ = follow(t, m, cmd)
	return m
}

// logRows is the log pane's rows as plain text.
func logRows(m Model) []string { return strings.Split(ansi.Strip(m.detail.lv.View()), "\n") }

func onScreen(m Model, s string) bool { return strings.Contains(ansi.Strip(m.View()), s) }

func TestLogSearchMovesToEachMatch(t *testing.T) {
	m := openRun(t, newFake(), 80, 24, longLog(10000))
	m, _ = press(m, "/", "n", "e", "e", "d", "l", "e", "enter")
	tests := []struct {
		key, state, line string
	}{
		{"", "/needle 1/4", "line 02500 needle"},
		{"n", "/needle 2/4", "line 05000 needle"},
		{"n", "/needle 3/4", "line 07500 needle"},
		{"N", "/needle 2/4", "line 05000 needle"},
		{"N", "/needle 1/4", "line 02500 needle"},
		{"N", "/needle 4/4", "line 10000 needle"}, // wraps around
	}
	for _, tc := range tests {
		if tc.key != "" {
			m, _ = press(m, tc.key)
		}
		if !onScreen(m, tc.state) {
			t.Errorf("after %q: no %q on the title:\n%s", tc.key, tc.state, ansi.Strip(m.View()))
		}
		// The current match is drawn bold and reversed (NO_COLOR's mark).
		if want := "line " + tc.line[5:10] + " \x1b[1;7mneedle\x1b[m"; !strings.Contains(m.View(), want) {
			t.Errorf("after %q: %q not marked on screen", tc.key, tc.line)
		}
	}
	m, _ = press(m, "esc")
	if onScreen(m, "/needle") || strings.Contains(m.View(), "\x1b[") || !m.inDetail {
		t.Errorf("esc did not clear the search, or left the detail")
	}
	m, cmd := press(m, "esc")
	m, _ = follow(t, m, cmd)
	if m.inDetail {
		t.Error("a second esc did not leave the detail")
	}
}

func TestLogFilterShowsOnlyMatches(t *testing.T) {
	m := openRun(t, newFake(), 80, 24, longLog(10000))
	m, _ = press(m, "&", "N", "e", "e", "d", "l", "e")
	if !onScreen(m, "&Needle 0 lines") {
		t.Errorf("a query with upper case does not ignore case:\n%s", ansi.Strip(m.View()))
	}
	m, _ = press(m, "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "n", "e", "e", "d", "l", "e", "enter")
	var got []string
	for _, r := range logRows(m) {
		if strings.TrimSpace(r) != "" && !strings.Contains(r, "cpu ") {
			got = append(got, strings.TrimSpace(r))
		}
	}
	want := []string{"line 02500 needle", "line 05000 needle", "line 07500 needle", "line 10000 needle"}
	if strings.Join(got, "|") != strings.Join(want, "|") || !onScreen(m, "&needle 4 lines") {
		t.Errorf("filtered rows %q, want %q; screen:\n%s", got, want, ansi.Strip(m.View()))
	}
}

// openLive opens sync_orders' detail at 80x24 after n lines of live
// output, "tick 0" to "tick n-1".
func openLive(t *testing.T, n int) (Model, *fakeSource) {
	t.Helper()
	f := newFake()
	m := loaded(t, f, Options{}, 80, 24)
	var lines []string
	for i := range n {
		lines = append(lines, "tick "+itoa(i))
	}
	m = feed(t, m, f, output("sync_orders", lines...)...)
	m = selectJob(t, m, "sync_orders")
	m, cmd := press(m, "enter")
	m, _ = follow(t, m, cmd)
	return m, f
}

func TestLogFollowPausesAndResumes(t *testing.T) {
	m, f := openLive(t, 100)
	last := func(m Model) string { rows := logRows(m); return strings.TrimSpace(rows[len(rows)-1]) }
	if !m.detail.lv.follow || last(m) != "tick 99" || !onScreen(m, "following") {
		t.Fatalf("the live output does not follow its end: last row %q", last(m))
	}
	m, _ = press(m, "pgup")
	top := logRows(m)[0]
	if !onScreen(m, "paused — G to follow") {
		t.Errorf("page up does not say the output is paused:\n%s", ansi.Strip(m.View()))
	}
	m = feed(t, m, f, output("sync_orders", "tick 100", "tick 101", "tick 102")...)
	if logRows(m)[0] != top || !onScreen(m, "paused — G to follow, 3 new lines") {
		t.Errorf("new lines moved a paused view (top %q, was %q) or went uncounted:\n%s", logRows(m)[0], top, ansi.Strip(m.View()))
	}
	m, _ = press(m, "G")
	if !m.detail.lv.follow || last(m) != "tick 102" {
		t.Errorf("G does not follow again: last row %q", last(m))
	}
	m = feed(t, m, f, output("sync_orders", "tick 103")...)
	if last(m) != "tick 103" {
		t.Errorf("following, the newest line is not shown: %q", last(m))
	}
}

// TestLogPausedThroughRotation: the live tail drops its oldest lines when
// full; a paused view stays on the lines it showed.
func TestLogPausedThroughRotation(t *testing.T) {
	m, f := openLive(t, tailLines)
	m, _ = press(m, "pgup", "pgup")
	top := logRows(m)[0]
	m = feed(t, m, f, output("sync_orders", "a", "b", "c", "d", "e")...)
	if logRows(m)[0] != top {
		t.Errorf("the paused view moved from %q to %q", top, logRows(m)[0])
	}
}

func TestLogTimesWrapAndFullScreen(t *testing.T) {
	f := newFake()
	m := loaded(t, f, Options{}, 80, 24)
	long := strings.Repeat("word ", 30)
	m = feed(t, m, f, output("sync_orders", "first", long)...)
	m = selectJob(t, m, "sync_orders")
	m, cmd := press(m, "enter")
	m, _ = follow(t, m, cmd)
	m, _ = press(m, "t")
	// output() stamps line i at ref-20s+i s, in the clock's zone (UTC).
	if want := ref.Add(-20*time.Second).Format(stampLayout) + "   first"; !onScreen(m, want) {
		t.Errorf("t shows no arrival time %q:\n%s", want, ansi.Strip(m.View()))
	}
	m, _ = press(m, "w")
	n := 0
	for _, r := range logRows(m) {
		if strings.Contains(r, "word") {
			n++
		}
	}
	if n < 2 || !onScreen(m, "wrap") {
		t.Errorf("w does not wrap the long line (%d rows)", n)
	}
	m, _ = press(m, "f")
	if onScreen(m, "runs and skips") || !onScreen(m, "sync_orders · live output") {
		t.Errorf("f does not give the log the whole body:\n%s", ansi.Strip(m.View()))
	}
	checkScreen(t, m.View(), 80, 24)
	m, _ = press(m, "esc")
	if !onScreen(m, "runs and skips") || !m.inDetail {
		t.Errorf("esc does not leave the full screen for the detail")
	}
}

func TestLogSavedHasNoTimes(t *testing.T) {
	m := openRun(t, newFake(), 80, 24, []string{"stdout | one", "stderr | two"})
	m, _ = press(m, "t")
	if !onScreen(m, "saved logs carry no times") {
		t.Errorf("t on a saved log does not say it has no times:\n%s", ansi.Strip(m.View()))
	}
}

func TestLogSaveWritesAFile(t *testing.T) {
	t.Chdir(t.TempDir())
	m := openRun(t, newFake(), 80, 24, longLog(10000))
	m, cmd := press(m, "S")
	m, _ = follow(t, m, cmd)
	dir, _ := os.Getwd()
	path := filepath.Join(dir, "cronvisor-sync_orders-r-sync-6.log")
	if want := "saved 10000 lines to " + path; m.status != want {
		t.Errorf("status %q, want %q", m.status, want)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(string(b), "stdout | line 00001\n") || strings.Count(string(b), "\n") != 10000 {
		t.Fatalf("saved file: %v, %d lines", err, strings.Count(string(b), "\n"))
	}
	m, _ = press(m, "&", "n", "e", "e", "d", "l", "e", "enter")
	m, cmd = press(m, "S")
	m, _ = follow(t, m, cmd)
	if want := "saved 4 lines to " + filepath.Join(dir, "cronvisor-sync_orders-r-sync-6-1.log"); m.status != want {
		t.Errorf("status %q, want %q", m.status, want)
	}
}

// TestLogOfAnAdoptedRun: a run its keeper runs sends no output; its live
// pane shows the run's saved log, read again as the clock ticks.
func TestLogOfAnAdoptedRun(t *testing.T) {
	f := newFake()
	for i := range f.jobs {
		if f.jobs[i].Name == "sync_orders" {
			f.jobs[i].Adopted, f.jobs[i].SupervisorPID = true, 1937
		}
	}
	f.logs = map[string][]string{"r-sync-7": {"stdout | kept by the keeper", "stdout | still going"}}
	m := loaded(t, f, Options{}, 80, 24)
	m = selectJob(t, m, "sync_orders")
	m, cmd := press(m, "enter")
	m, _ = follow(t, m, cmd)
	m.detail, cmd = m.detail.poll(ref)
	m, _ = follow(t, m, cmd)
	if !onScreen(m, "still going") || !onScreen(m, "following") {
		t.Fatalf("the adopted run's saved log is not shown live:\n%s", ansi.Strip(m.View()))
	}
	m, _ = press(m, "/", "k", "e", "p", "t", "enter")
	if !onScreen(m, "/kept 1/1") {
		t.Errorf("no search over the adopted run's log:\n%s", ansi.Strip(m.View()))
	}
}

// TestLogKeysLeaveTheDetailsKeys: the log takes no key the detail had.
func TestLogKeysLeaveTheDetailsKeys(t *testing.T) {
	m := openRun(t, newFake(), 80, 24, longLog(100))
	for _, k := range []string{"r", "p", "x"} {
		_, cmd := press(m, k)
		if cmd == nil {
			t.Errorf("%s does nothing in the detail", k)
			continue
		}
		if _, ok := cmd().(requestMsg); !ok {
			t.Errorf("%s no longer asks for an action", k)
		}
	}
	if mm, _ := press(m, "up"); mm.detail.sel != m.detail.sel-1 {
		t.Error("up no longer picks a newer run")
	}
	mm, _ := press(m, "/", "q", "?")
	if !mm.detail.Editing() || mm.showHelp || mm.detail.lv.input.Value() != "q?" {
		t.Error("keys typed into the search went elsewhere")
	}
}

func TestLogAtEverySize(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {200, 50}, {40, 10}, {20, 6}} {
		m := openRun(t, newFake(), sz[0], sz[1], longLog(3000))
		for _, keys := range [][]string{{"/", "n", "e", "enter"}, {"f"}, {"w"}, {"t"}, {"G"}, {"f"}} {
			m, _ = press(m, keys...)
			checkScreen(t, m.View(), sz[0], sz[1])
		}
	}
}

func BenchmarkLogSearch10k(b *testing.B) {
	lines := longLog(10000)
	for b.Loop() {
		_ = search{}.with("needle", false).over(lines)
	}
}

// BenchmarkLogView10k draws a 10,000-line log at 200x50 with a search
// on: the rows on screen only.
func BenchmarkLogView10k(b *testing.B) {
	lines := longLog(10000)
	v := New(newFake(), Options{Clock: fixedClock}).detail.lv.setSize(200, 48)
	v = v.show("bench", nil, lines, nil, false)
	v.find = search{}.with("needle", false).over(lines)
	v = v.jump(1)
	for b.Loop() {
		_ = v.title("run") + v.View()
	}
}

// TestDetailHelpListsLogKeys: ? in the detail shows every log key, also
// at 80 columns.
func TestDetailHelpListsLogKeys(t *testing.T) {
	f := newFake()
	m := loaded(t, f, Options{}, 80, 24)
	m, _ = press(openSync(t, m, f), "?")
	for _, want := range []string{"pgup   log up", "G/end  follow", "/ search", "& filter lines", "n next match",
		"N prev match", "t timestamps", "w wrap", "f full screen", "S save to a file", "r   run now", "x   kill"} {
		if !onScreen(m, want) {
			t.Errorf("the detail's help has no %q:\n%s", want, ansi.Strip(m.View()))
		}
	}
}
