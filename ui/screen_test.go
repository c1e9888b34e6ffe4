package ui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// TestScreenWritesOnlyChangedLines: an idle console's frame differs from
// the last by its clock; only that line goes to the terminal.
func TestScreenWritesOnlyChangedLines(t *testing.T) {
	tests := []struct {
		name, before, after string
		want                string // what the second frame writes
	}{
		{"the same frame", "a\nb\nc", "a\nb\nc", ""},
		{"one line changed", "a\nb\nc", "a\nB\nc", "\x1b[2;1HB\x1b[K"},
		{"a shorter frame", "a\nb\nc", "a\nb", "\x1b[3;1H\x1b[K"},
		{"a full-width line", "a\nb", "a\nbbbb", "\x1b[2;1Hbbbb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			s := &screen{out: &out}
			s.draw(tc.before, 4)
			if !strings.Contains(out.String(), "\x1b[2J") {
				t.Errorf("first frame %q does not clear the screen", out.String())
			}
			out.Reset()
			s.draw(tc.after, 4)
			if got := out.String(); got != tc.want {
				t.Errorf("wrote %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFramesAreHeldToMinFrame: updates closer than minFrame draw once,
// and the last state is drawn when the held frame's time comes.
func TestFramesAreHeldToMinFrame(t *testing.T) {
	now := ref
	var out bytes.Buffer
	f := framed{m: New(newFake(), Options{Title: sockPath, Clock: fixedClock}), scr: &screen{out: &out},
		clock: func() time.Time { return now }}
	step := func(msg tea.Msg) tea.Cmd {
		t.Helper()
		m, cmd := f.Update(msg)
		f = m.(framed)
		return cmd
	}
	step(tea.WindowSizeMsg{Width: 80, Height: 20})
	if out.Len() == 0 || f.View() == "" {
		t.Fatalf("the first frame was not drawn (view %q)", f.View())
	}
	out.Reset()
	now = now.Add(minFrame / 2)
	if cmd := step(tea.WindowSizeMsg{Width: 60, Height: 20}); cmd == nil || out.Len() != 0 {
		t.Fatalf("a frame within minFrame was drawn (%d bytes) or not scheduled", out.Len())
	}
	step(tea.WindowSizeMsg{Width: 70, Height: 20}) // held too, no second frameMsg needed
	now = now.Add(minFrame)
	step(frameMsg{})
	if !strings.Contains(out.String(), "\x1b[2J") || f.scr.held {
		t.Errorf("the held frame (a resize: the whole screen) was not drawn: %q", out.String())
	}
	if !strings.Contains(f.View(), "cronvisor") {
		t.Errorf("bubbletea's view %q is not the frame's header", f.View())
	}
}
