package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// clockAt is a console clock the test moves.
type clockAt struct{ t time.Time }

func (c *clockAt) now() time.Time { return c.t }

// TestCommandStrip: each action that changes something shows the CLI
// command that does the same on the strip above the status line, for
// stripFor, and the command log (@, :log) lists them all with their time
// and result.
func TestCommandStrip(t *testing.T) {
	tests := []struct {
		name string
		keys []string
		want string
	}{
		{"pause", []string{"g", "p"}, "$ cronvisor pause backup_db"},
		{"resume", []string{"g", "j", "j", "j", "p"}, "$ cronvisor resume report_weekly"},
		{"run now", []string{"g", "r"}, "$ cronvisor trigger backup_db"},
		{"forced run", []string{"g", "j", "j", "j", "r", "»", "y"}, "$ cronvisor trigger --force report_weekly"},
		{"kill", []string{"G", "x", "»", "y"}, "$ cronvisor kill sync_orders"},
		{"reload", []string{"R", "y"}, "$ cronvisor reload"},
		{":pause", []string{":", "p", "a", "u", "s", "e", " ", "b", "a", "c", "k", "u", "p", "_", "d", "b", "enter"}, "$ cronvisor pause backup_db"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := &clockAt{t: ref}
			m := loaded(t, newFake(), Options{Clock: clk.now}, 80, 24)
			var cmd tea.Cmd
			for _, k := range tc.keys {
				if k == "»" { // the key's request, which asks first
					m, cmd = follow(t, m, cmd)
					continue
				}
				m, cmd = press(m, k)
			}
			m = untilAction(t, m, cmd)
			s := m.View()
			checkScreen(t, s, 80, 24)
			lines := strings.Split(s, "\n")
			if strip := lines[len(lines)-3]; !strings.Contains(strip, tc.want) {
				t.Fatalf("the line above the status line reads %q, want %q:\n%s", strip, tc.want, s)
			}
			clk.t = ref.Add(stripFor)
			m, _ = m.update(tickMsg(clk.t))
			if s := m.View(); strings.Contains(s, tc.want) {
				t.Errorf("the strip still shows after %v:\n%s", stripFor, s)
			}
			m, _ = press(m, "@")
			s = m.View()
			if line := lineWith(s, strings.TrimPrefix(tc.want, "$ ")); !strings.Contains(line, "12:00:00") || !strings.Contains(line, "→") {
				t.Errorf("the command log's line %q has no time or result:\n%s", line, s)
			}
			m, _ = press(m, "esc")
			if strings.Contains(m.View(), "Command log") {
				t.Error("esc did not close the command log")
			}
		})
	}
}

// TestReadOnlyStripShowsReads: a read-only console changes nothing; its
// strip shows the read commands of what it opens.
func TestReadOnlyStripShowsReads(t *testing.T) {
	m := loaded(t, newFake(), Options{ReadOnly: true}, 80, 24)
	for _, step := range []struct{ key, want string }{
		{"2", "$ cronvisor locks"}, {"3", "$ cronvisor history"}, {"1", "$ cronvisor status"},
	} {
		m, _ = press(m, step.key)
		if !strings.Contains(m.View(), step.want) {
			t.Errorf("after %s no %q:\n%s", step.key, step.want, m.View())
		}
	}
	m, cmd := press(m, "g", "enter")
	m, _ = follow(t, m, cmd)
	if !strings.Contains(m.View(), "$ cronvisor status backup_db") {
		t.Errorf("the detail's read is not on the strip:\n%s", m.View())
	}
	full := loaded(t, newFake(), Options{}, 80, 24)
	full, _ = press(full, "2")
	if strings.Contains(full.View(), "$ cronvisor") {
		t.Errorf("a console that can change things shows reads too:\n%s", full.View())
	}
}

// untilAction follows cmd's messages until an action's answer is
// handled: a key's request, then the action it starts.
func untilAction(t *testing.T, m Model, cmd tea.Cmd) Model {
	t.Helper()
	for range 4 {
		if cmd == nil {
			break
		}
		msg := cmd()
		m, cmd = m.update(msg)
		if _, ok := msg.(actionMsg); ok {
			return m
		}
	}
	t.Fatal("no action was answered")
	return m
}
