package ui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// TestListKeepsItsSelection drives the shared list with plain messages: a
// named list follows its selected row across refreshes, an unnamed one
// keeps the cursor's index.
func TestListKeepsItsSelection(t *testing.T) {
	names := []string{"a", "b", "c", "d"}
	key := func(r int) string { return names[r] }
	tests := []struct {
		name    string
		key     func(int) string
		moves   int
		rows    []int // the rows of the refresh after the moves
		wantPos int
		wantSel string
	}{
		{"named: the row moved up", key, 2, []int{2, 0, 1, 3}, 0, "c"},
		{"named: the row is gone", key, 2, []int{0, 1, 3}, 0, "a"},
		{"unnamed: the index stays", nil, 2, []int{3, 2, 1, 0}, 2, ""},
		{"unnamed: clamped to fewer rows", nil, 3, []int{0, 1}, 1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newList(&common{st: newStyles(lipgloss.DefaultRenderer(), defaultTheme())}, 4, tc.key).setSize(80, 20).setRows([]int{0, 1, 2, 3})
			for range tc.moves {
				var done listEffect
				l, _, done = l.update(newListKeys(), keyMsg("down"))
				if done != handled {
					t.Fatalf("down: %v, want handled", done)
				}
			}
			l = l.setRows(tc.rows)
			if l.cur.pos != tc.wantPos || l.name() != tc.wantSel {
				t.Errorf("cursor at %d on %q, want %d on %q", l.cur.pos, l.name(), tc.wantPos, tc.wantSel)
			}
		})
	}
}

func TestListFilter(t *testing.T) {
	steps := []struct {
		msg        tea.Msg
		want       listEffect
		wantActive bool
	}{
		{keyMsg("x"), notHandled, false}, // not a list key: the screen's
		{keyMsg("/"), handled, true},
		{keyMsg("q"), refilter, true}, // text while editing, not quit
		{keyMsg("enter"), refilter, true},
		{keyMsg("down"), handled, true}, // moves again once applied
		{keyMsg("esc"), refilter, false},
		{keyMsg("esc"), notHandled, false}, // nothing left to clear
	}
	l := newList(&common{st: newStyles(lipgloss.DefaultRenderer(), defaultTheme())}, 4, nil).setSize(80, 20).setRows([]int{0, 1})
	for i, s := range steps {
		var done listEffect
		l, _, done = l.update(newListKeys(), s.msg)
		if done != s.want || l.filter.active() != s.wantActive {
			t.Errorf("step %d (%v): %v, filter shown %v; want %v, %v", i, s.msg, done, l.filter.active(), s.want, s.wantActive)
		}
	}
	if l.filter.input.Value() != "" {
		t.Errorf("filter %q after esc, want it cleared", l.filter.input.Value())
	}
}
