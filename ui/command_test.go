package ui

import (
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// typeLine opens the command line and types line, one read, as a
// terminal delivers a typed or pasted-by-tmux line.
func typeLine(m Model, line string) Model {
	m, _ = m.update(keyMsg(":"))
	if line != "" {
		m, _ = m.update(keyMsg(line))
	}
	return m
}

// runLine types line after ":" and presses enter, following what it asks
// of the source to the end.
func runLine(t *testing.T, m Model, line string) (Model, tea.Cmd) {
	t.Helper()
	m, cmd := typeLine(m, line).update(keyMsg("enter"))
	for cmd != nil {
		m, cmd = follow(t, m, cmd)
	}
	return m, nil
}

// TestCommandMode is issue 25's point 7: ":" opens a command line whose
// commands switch views, act on a named job, and quit.
func TestCommandMode(t *testing.T) {
	for _, tc := range []struct {
		line     string
		wantTab  tab
		wantCall string // "" for none
		wantQuit bool
		wantSay  string
	}{
		{line: "locks", wantTab: tabLocks},
		{line: "history", wantTab: tabHistory},
		{line: "jobs", wantTab: tabJobs},
		{line: "pause backup_db", wantCall: "pause backup_db", wantSay: "paused backup_db"},
		{line: "resume report_weekly", wantCall: "resume report_weekly", wantSay: "resumed report_weekly"},
		{line: "pause nosuch", wantSay: "no job nosuch"},
		{line: "pause", wantSay: ":pause takes one job's name"},
		{line: "frobnicate", wantSay: "unknown command :frobnicate"},
		{line: "q", wantQuit: true},
	} {
		t.Run(tc.line, func(t *testing.T) {
			f := newFake()
			m, _ := press(loaded(t, f, Options{}, 100, 30), "2") // start on the locks tab
			if tc.wantTab == tabLocks {
				m, _ = press(m, "3")
			}
			m = typeLine(m, tc.line)
			if !m.cmd.active || !strings.Contains(m.statusLine(), ":"+tc.line) {
				t.Fatalf("the command line does not show %q: %q", tc.line, m.statusLine())
			}
			before := len(f.called())
			m, cmd := m.update(keyMsg("enter"))
			if tc.wantQuit {
				if !isQuit(cmd) {
					t.Fatal(":q did not quit")
				}
				return
			}
			for cmd != nil {
				m, cmd = follow(t, m, cmd)
			}
			calls := slices.DeleteFunc(f.called()[before:], func(c string) bool {
				return strings.HasPrefix(c, "jobs") || c == "locks" || strings.HasPrefix(c, "history")
			})
			if tc.wantCall == "" && len(calls) > 0 || tc.wantCall != "" && !slices.Equal(calls, []string{tc.wantCall}) {
				t.Errorf("calls %v, want %q", calls, tc.wantCall)
			}
			if tc.wantSay == "" && m.tab != tc.wantTab {
				t.Errorf("on tab %v, want %v", m.tab, tc.wantTab)
			}
			if m.cmd.active || !strings.Contains(m.statusLine(), tc.wantSay) {
				t.Errorf("status line %q (command line open: %v), want it to say %q", m.statusLine(), m.cmd.active, tc.wantSay)
			}
		})
	}
}

// TestCommandCompletion: tab completes a command's name, then a job's
// name; several candidates complete to what they share and are listed.
func TestCommandCompletion(t *testing.T) {
	for _, tc := range []struct {
		typed, want, hint string
	}{
		{"pa", "pause ", ""},
		{"pause ba", "pause backup_db", ""},
		{"resume re", "resume re", "refund_orders report_weekly"},
		{"re", "re", "resume reload"},
		{"hi", "history", ""},
		{"pause zz", "pause zz", "no match"},
	} {
		t.Run(tc.typed, func(t *testing.T) {
			m := typeLine(loaded(t, newFake(), Options{}, 100, 30), tc.typed)
			m, _ = m.update(keyMsg("tab"))
			if got := m.cmd.input.Value(); got != tc.want || m.cmd.hint != tc.hint {
				t.Errorf("tab after %q: %q (hint %q), want %q (hint %q)", tc.typed, got, m.cmd.hint, tc.want, tc.hint)
			}
			if m.tab != tabJobs {
				t.Errorf("tab in the command line switched the view to %v", m.tab)
			}
		})
	}
}

// TestCommandLineLeaves: esc, and backspace on an empty line, close the
// command line without running anything.
func TestCommandLineLeaves(t *testing.T) {
	for _, k := range []string{"esc", "backspace"} {
		m := typeLine(loaded(t, newFake(), Options{}, 100, 30), "")
		m, _ = m.update(keyMsg(k))
		if m.cmd.active {
			t.Errorf("%s left the command line open", k)
		}
	}
}

// TestNumberKeysPickTheTabs is issue 25's point 7: 1..3 show the tabs in
// their order on the header, also from the detail.
func TestNumberKeysPickTheTabs(t *testing.T) {
	f := newFake()
	m := openSync(t, loaded(t, f, Options{}, 100, 30), f)
	for _, tc := range []struct {
		key  string
		want tab
	}{{"3", tabHistory}, {"2", tabLocks}, {"1", tabJobs}} {
		m, _ = press(m, tc.key)
		if m.tab != tc.want || m.inDetail {
			t.Errorf("%s shows tab %v (detail %v), want %v", tc.key, m.tab, m.inDetail, tc.want)
		}
	}
	m, _ = press(m, "/", "2") // in a filter a digit is text
	if m.tab != tabJobs || m.jobs.filter.input.Value() != "2" {
		t.Errorf("2 in the filter switched to tab %v (filter %q)", m.tab, m.jobs.filter.input.Value())
	}
}

// TestEscIsInTheHelp is issue 25's point 7: the full help names esc and
// the command line, and esc closes it.
func TestEscIsInTheHelp(t *testing.T) {
	m, _ := press(loaded(t, newFake(), Options{}, 120, 30), "?")
	h := m.helpView()
	for _, want := range []string{"esc", "back/close", ": ", "command", "1-5"} {
		if !strings.Contains(h, want) {
			t.Errorf("the full help lacks %q:\n%s", want, h)
		}
	}
	if m, _ = press(m, "esc"); m.showHelp {
		t.Error("esc did not close the help")
	}
}

// TestReadOnlyConsole is issue 25's point 7: a read-only console offers
// no key that changes anything, refuses each one (keys and commands) with
// a reason, and completes no such command.
func TestReadOnlyConsole(t *testing.T) {
	f := newFake()
	m := selectJob(t, loaded(t, f, Options{ReadOnly: true}, 120, 30), "sync_orders")
	m, _ = press(m, "?")
	h := m.helpView()
	for _, gone := range []string{"run now", "pause", "kill", "reload"} {
		if strings.Contains(h, gone) {
			t.Errorf("a read-only console's help offers %q:\n%s", gone, h)
		}
	}
	m, _ = press(m, "?")
	before := len(f.called())
	for _, keys := range [][]string{{"r"}, {"p"}, {"x", "y"}, {"R", "y"}, {"enter", "r"}, {"enter", "x", "y"}} {
		var cmd tea.Cmd
		for _, k := range keys {
			m, cmd = press(m, k)
			for cmd != nil {
				m, cmd = follow(t, m, cmd)
			}
		}
		if !strings.Contains(m.statusLine(), "read-only console") {
			t.Errorf("%v: status line %q, want it to say the console is read-only", keys, m.statusLine())
		}
		m, _ = press(m, "esc")
	}
	for _, line := range []string{"pause backup_db", "resume report_weekly", "kill sync_orders", "run backup_db", "reload"} {
		m, _ = runLine(t, m, line)
		if !strings.Contains(m.statusLine(), "read-only console") {
			t.Errorf(":%s: status line %q, want a refusal", line, m.statusLine())
		}
	}
	m = typeLine(m, "p")
	m, _ = m.update(keyMsg("tab"))
	if m.cmd.input.Value() != "p" || m.cmd.hint != "no match" {
		t.Errorf("a read-only console completes :p to %q (%s)", m.cmd.input.Value(), m.cmd.hint)
	}
	calls := slices.DeleteFunc(f.called()[before:], func(c string) bool {
		return c == "jobs" || c == "locks" || strings.HasPrefix(c, "history") || strings.HasPrefix(c, "log ")
	})
	if len(calls) > 0 {
		t.Errorf("a read-only console asked the daemon for %v", calls)
	}
}

// TestDestructiveKeysAsk is issue 25's point 7: kill and reload ask
// first, from a key or a command, and nothing happens until y.
func TestDestructiveKeysAsk(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(m Model) Model
		want string
	}{
		{"x", func(m Model) Model { m, cmd := press(m, "x"); m, _ = m.update(cmd()); return m }, "kill sync_orders"},
		{"R", func(m Model) Model { m, _ = press(m, "R"); return m }, "reload"},
		{":kill", func(m Model) Model { m, _ = typeLine(m, "kill sync_orders").update(keyMsg("enter")); return m }, "kill sync_orders"},
		{":reload", func(m Model) Model { m, _ = typeLine(m, "reload").update(keyMsg("enter")); return m }, "reload"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			m := selectJob(t, loaded(t, f, Options{}, 120, 30), "sync_orders")
			before := len(f.called())
			m = tc.do(m)
			if m.ask == nil || len(f.called()) != before {
				t.Fatalf("%s did not ask first (calls %v)", tc.name, f.called()[before:])
			}
			m, cmd := press(m, "y")
			m, _ = follow(t, m, cmd)
			if !slices.Contains(f.called()[before:], tc.want) {
				t.Errorf("y did not %s: calls %v", tc.want, f.called()[before:])
			}
		})
	}
}
