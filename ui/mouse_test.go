package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

func click(m Model, x, y int) Model {
	m, _ = m.update(tea.MouseMsg{X: x, Y: y, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress})
	return m
}

// selectedLine is the screen's line that carries the selection mark.
func selectedLine(t *testing.T, m Model) int {
	t.Helper()
	for i, l := range strings.Split(m.View(), "\n") {
		if strings.HasPrefix(l, "›") {
			return i
		}
	}
	t.Fatalf("no selected row on screen:\n%s", m.View())
	return 0
}

// A left click selects the row under it in the jobs table, the locks and
// the history, wherever their rows start on the screen; a click off the
// rows (a header, a rule, below the last row) selects nothing.
func TestClickSelectsTheRow(t *testing.T) {
	tests := []struct {
		name    string
		keys    []string
		y       int // the screen's line clicked
		wantPos int // -1: the selection stays
	}{
		{"jobs, third row", nil, 4, 2},
		{"jobs, the header", nil, 1, -1},
		{"jobs, under the last row", nil, 9, -1},
		{"jobs, filtered: the filter line moves the rows", []string{"/", "o", "enter"}, 4, 1},
		{"locks, second row", []string{"2"}, 3, 1},
		{"history, the tab bar", []string{"3"}, 0, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := pressRead(t, loaded(t, newFake(), Options{}, 80, 40), tc.keys...)
			before := selectedLine(t, m)
			m = click(m, 10, tc.y)
			got := selectedLine(t, m)
			want := tc.y
			if tc.wantPos < 0 {
				want = before
			}
			if got != want {
				t.Errorf("after a click on line %d the selection is on line %d, want %d:\n%s", tc.y, got, want, m.View())
			}
		})
	}
}

// On the history a click lands on the row under it below the strips,
// whose number depends on the jobs; and the wheel still scrolls.
func TestClickHistoryRow(t *testing.T) {
	m := pressRead(t, loaded(t, newFake(), Options{}, 80, 40), "3")
	first := selectedLine(t, m)
	m = click(m, 10, first+4)
	if got := selectedLine(t, m); got != first+4 || m.hist.cur.pos != 4 {
		t.Errorf("a click on line %d selected line %d (row %d), want row 4", first+4, got, m.hist.cur.pos)
	}
	m, _ = m.update(tea.MouseMsg{Button: tea.MouseButtonWheelDown, Action: tea.MouseActionPress})
	if m.hist.cur.pos != 4+wheelStep {
		t.Errorf("the wheel moved the history's cursor to %d, want %d", m.hist.cur.pos, 4+wheelStep)
	}
}
