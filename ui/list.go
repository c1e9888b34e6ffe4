package ui

import (
	"strings"

	textcursor "github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
)

// cursor is a selection in a list shown a window at a time.
type cursor struct {
	pos, off int
}

// wheelStep is how many rows one mouse wheel notch moves.
const wheelStep = 3

// handle moves the cursor for a list key or wheel notch and reports
// whether msg was one.
func (c *cursor) handle(k listKeys, msg tea.Msg, n, height int) bool {
	pos := c.pos
	switch msg := msg.(type) {
	case tea.KeyMsg:
		switch {
		case key.Matches(msg, k.Up):
			pos--
		case key.Matches(msg, k.Down):
			pos++
		case key.Matches(msg, k.PageUp):
			pos -= max(height, 1)
		case key.Matches(msg, k.PageDown):
			pos += max(height, 1)
		case key.Matches(msg, k.Top):
			pos = 0
		case key.Matches(msg, k.Bottom):
			pos = n - 1
		default:
			return false
		}
	case tea.MouseMsg:
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			pos -= wheelStep
		case tea.MouseButtonWheelDown:
			pos += wheelStep
		default:
			return false
		}
	default:
		return false
	}
	c.pos = clamp(pos, n)
	c.fit(n, height)
	return true
}

// fit keeps the cursor inside n rows and visible in height rows.
func (c *cursor) fit(n, height int) {
	c.pos = clamp(c.pos, n)
	c.off = window(c.off, c.pos, height, n)
}

// filter is a list's "/" filter: a one-line text input that narrows the
// list as the user types.
type filter struct {
	input   textinput.Model
	keys    filterKeys
	editing bool
}

func newFilter(c *common) filter {
	in := textinput.New()
	in.Prompt = "/ "
	in.PromptStyle = c.st.prompt
	in.Placeholder = "type to filter"
	in.PlaceholderStyle = c.st.muted
	// A blinking cursor redraws the screen twice a second for nothing.
	in.Cursor.SetMode(textcursor.CursorStatic)
	return filter{input: in, keys: newFilterKeys()}
}

// start focuses the input.
func (f filter) start() (filter, tea.Cmd) {
	f.editing = true
	return f, f.input.Focus()
}

// update handles a key while the filter is being edited: enter keeps the
// filter, esc clears it, anything else edits it.
func (f filter) update(msg tea.KeyMsg) (filter, tea.Cmd) {
	switch {
	case key.Matches(msg, f.keys.Apply):
		f.editing = false
		f.input.Blur()
		return f, nil
	case key.Matches(msg, f.keys.Clear):
		f.editing = false
		f.input.Blur()
		f.input.SetValue("")
		return f, nil
	}
	var cmd tea.Cmd
	f.input, cmd = f.input.Update(msg)
	return f, cmd
}

// clear drops a kept filter.
func (f filter) clear() filter {
	f.input.SetValue("")
	return f
}

// active reports whether the filter narrows the list or is being edited,
// which is when its line is shown.
func (f filter) active() bool { return f.editing || f.input.Value() != "" }

// match reports whether any of fields contains the filter text, ignoring
// case.
func (f filter) match(fields ...string) bool {
	q := strings.ToLower(strings.TrimSpace(f.input.Value()))
	if q == "" {
		return true
	}
	for _, s := range fields {
		if strings.Contains(strings.ToLower(s), q) {
			return true
		}
	}
	return false
}

func (f filter) view(width int) string {
	f.input.Width = max(width-4, 1)
	return fit(f.input.View(), width)
}
