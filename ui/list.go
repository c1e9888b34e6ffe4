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

// list is what every list screen shares, as gh-dash's section.BaseModel
// is embedded by each of its sections: the rows picked from the store, a
// cursor over them, the "/" filter and the screen's size. A screen embeds
// it, picks the rows in its Refresh, and adds its columns, its own keys
// and what it says about the selected row.
type list struct {
	c      *common
	filter filter
	rows   []int // positions in the store's slice, filtered and ordered by the screen
	cur    cursor
	// key names the row at a position of the store's slice; the selection
	// follows that name across refreshes. nil: the cursor keeps its index.
	key      func(row int) string
	selected string
	chrome   int // the screen's lines besides the rows and the filter's
	// above is the screen's lines between the filter's and the first row
	// (a header), where a click finds the rows.
	above         int
	width, height int
}

func newList(c *common, chrome int, key func(row int) string) list {
	return list{c: c, filter: newFilter(c), chrome: chrome, above: 1, key: key}
}

// setSize sets the area the screen draws in.
func (l list) setSize(w, h int) list {
	l.width, l.height = w, h
	l.cur.fit(len(l.rows), l.listHeight())
	return l
}

// Editing reports whether the filter takes the keys.
func (l list) Editing() bool { return l.filter.editing }

// listHeight is the rows shown at a time.
func (l list) listHeight() int {
	h := l.height - l.chrome
	if l.filter.active() {
		h--
	}
	return max(h, 1)
}

// listEffect is what list.update did with a message.
type listEffect int

const (
	notHandled listEffect = iota
	handled               // the filter or the cursor took it
	refilter              // the filter changed: the screen picks its rows again
)

// update handles what every list handles: keys while the filter is
// edited, moves of the cursor (k, the screen's, and the wheel), "/" and
// esc.
func (l list) update(k listKeys, msg tea.Msg) (list, tea.Cmd, listEffect) {
	if km, ok := msg.(tea.KeyMsg); ok && l.filter.editing {
		var cmd tea.Cmd
		l.filter, cmd = l.filter.update(km)
		return l, cmd, refilter
	}
	if l.cur.handle(k, msg, len(l.rows), l.listHeight()) || l.click(msg) {
		l.selected = l.name()
		return l, nil, handled
	}
	km, ok := msg.(tea.KeyMsg)
	switch {
	case !ok:
	case key.Matches(km, l.filter.keys.Filter):
		var cmd tea.Cmd
		l.filter, cmd = l.filter.start()
		return l, cmd, handled
	case key.Matches(km, l.filter.keys.Clear) && l.filter.active():
		l.filter = l.filter.clear()
		return l, nil, refilter
	}
	return l, nil, notHandled
}

// click moves the cursor to the row under a left click; msg's Y is the
// line of the screen's view. It reports whether a row was there.
func (l *list) click(msg tea.Msg) bool {
	m, ok := msg.(tea.MouseMsg)
	if !ok || m.Button != tea.MouseButtonLeft || m.Action != tea.MouseActionPress {
		return false
	}
	y := m.Y - len(l.head()) - l.above
	from, to := l.shown()
	if y < 0 || from+y >= to {
		return false
	}
	l.cur.pos = from + y
	return true
}

// setRows takes the rows the screen picked and puts the cursor back on
// the selected row when the screen names its rows.
func (l list) setRows(rows []int) list {
	l.rows = rows
	if l.key != nil {
		l.cur.pos = 0
		for i, r := range rows {
			if l.key(r) == l.selected {
				l.cur.pos = i
			}
		}
	}
	l.cur.fit(len(l.rows), l.listHeight())
	l.selected = l.name()
	return l
}

// name is the selected row's name, "" for an empty list or unnamed rows.
func (l list) name() string {
	if len(l.rows) == 0 || l.key == nil {
		return ""
	}
	return l.key(l.rows[l.cur.pos])
}

// row is the selected row's position in the store's slice; false for an
// empty list.
func (l list) row() (int, bool) {
	if len(l.rows) == 0 {
		return 0, false
	}
	return l.rows[l.cur.pos], true
}

// shown is the range of l.rows on screen.
func (l list) shown() (from, to int) {
	return l.cur.off, min(len(l.rows), l.cur.off+l.listHeight())
}

// head is the filter's line while it shows.
func (l list) head() []string {
	if !l.filter.active() {
		return nil
	}
	return []string{l.filter.view(l.width)}
}
