package ui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// drain runs cmd and the commands its answers bring until none is left,
// as the program would; a batch's commands are followed in order.
func drain(t *testing.T, m Model, cmd tea.Cmd) Model {
	t.Helper()
	for n := 0; cmd != nil; n++ {
		if n > 20 {
			t.Fatal("the commands do not settle")
		}
		m, cmd = follow(t, m, cmd)
	}
	return m
}

// showTimeline opens the timeline on the loaded fixture, presses keys
// there, and answers the reads each brings.
func showTimeline(t *testing.T, m Model, keys ...string) Model {
	t.Helper()
	for _, k := range append([]string{"4"}, keys...) {
		var cmd tea.Cmd
		m, cmd = press(m, k)
		m = drain(t, m, cmd)
	}
	return m
}
