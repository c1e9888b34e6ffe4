package ui

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// The console draws its own frames. bubbletea's renderer wakes at its
// frame rate whether or not anything changed, and draws only on those
// wake-ups: a rate high enough for a key to answer promptly (10 a second)
// was most of an idle console's CPU, every wake-up of a Go process costing
// the machine the same whatever it does. Instead, the frame is drawn
// right after the Update that changed it, at most once per minFrame, and
// only its changed lines are written; bubbletea's renderer (kept for the
// terminal's modes: raw input, the alternate screen, the mouse, restoring
// all of it on exit) runs at its lowest rate and is given the frame's
// first line only: whatever it paints (it paints a line even for an empty
// view, after every resize) is what the console painted there.

// minFrame is the shortest time between two frames: a burst of updates
// (a chatty job's output) draws at most this often, and the last state
// is always drawn.
const minFrame = 16 * time.Millisecond

// frameMsg draws a frame held back by minFrame.
type frameMsg struct{}

// screen writes frames to the terminal, line by line where they changed.
type screen struct {
	out   io.Writer
	last  []string // the lines on the terminal; nil after a resize
	head  string   // the last frame's first line, bubbletea's view
	drawn time.Time
	held  bool // a frame is held back and a frameMsg is on its way
	buf   bytes.Buffer
}

// draw writes the lines of frame that differ from the terminal's.
func (s *screen) draw(frame string, width int) {
	lines := strings.Split(frame, "\n")
	s.buf.Reset()
	if s.last == nil {
		s.buf.WriteString(ansi.CursorHomePosition + ansi.EraseEntireScreen)
	}
	for i, l := range lines {
		if s.last != nil && i < len(s.last) && s.last[i] == l {
			continue
		}
		s.buf.WriteString("\x1b[" + strconv.Itoa(i+1) + ";1H")
		s.buf.WriteString(l)
		if ansi.StringWidth(l) < width {
			s.buf.WriteString(ansi.EraseLineRight)
		}
	}
	for i := len(lines); i < len(s.last); i++ { // a shorter frame
		s.buf.WriteString("\x1b[" + strconv.Itoa(i+1) + ";1H" + ansi.EraseLineRight)
	}
	s.last, s.head = lines, lines[0]
	if s.buf.Len() > 0 {
		_, _ = s.out.Write(s.buf.Bytes()) // a terminal gone is bubbletea's to report
	}
}

// framed is the model bubbletea runs: Model, drawn by a screen.
type framed struct {
	m     Model
	scr   *screen
	clock func() time.Time // the wall clock, for minFrame
}

func (f framed) Init() tea.Cmd { return f.m.Init() }

// View is the frame's first line for bubbletea's renderer; the frame is
// drawn in Update.
func (f framed) View() string { return f.scr.head }

func (f framed) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case frameMsg:
		f.scr.held = false
	case tea.WindowSizeMsg:
		f.scr.last = nil // the terminal reflows: draw it all
		f.m, cmd = f.m.update(msg)
	default:
		f.m, cmd = f.m.update(msg)
	}
	now := f.clock()
	if wait := minFrame - now.Sub(f.scr.drawn); wait > 0 {
		if f.scr.held {
			return f, cmd
		}
		f.scr.held = true
		return f, tea.Batch(cmd, tea.Tick(wait, func(time.Time) tea.Msg { return frameMsg{} }))
	}
	f.scr.draw(f.m.View(), f.m.width)
	f.scr.drawn = now
	return f, cmd
}
