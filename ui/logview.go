package ui

import (
	"slices"
	"strconv"
	"strings"

	textcursor "github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
	"github.com/charmbracelet/x/ansi"
)

// logView is the output pane of a job's detail: one run's output, live
// or saved, that follows its end, scrolls, searches and filters. It holds
// the lines it is given (the live tail or a saved log, both bounded where
// they are kept) and walks only the rows on screen, so a long saved log
// costs a search when the query changes and nothing per frame beyond the
// rows drawn.
type logView struct {
	c    *common
	keys logKeys
	// head are styled lines above the log (a run's cost, why there is no
	// log); they scroll with it but are neither searched nor saved.
	head  []string
	lines []string // as saved: "STREAM | TEXT", or a note of cronvisor's
	times []int64  // the lines' arrival (unix ms); nil: they carry none
	live  bool     // the live output, which follows its end
	name  string   // what the lines are, for the saved file's name
	total int      // lines ever seen (live): tells new lines from rotated ones
	// shown are the lines a filter keeps, nil without one.
	shown    []int
	top      int // first row on screen: head rows, then shown lines
	follow   bool
	newLines int // live lines arrived while not following
	find     search
	input    textinput.Model
	inputFor rune     // '/' or '&' while the input has the keys, else 0
	before   logPlace // where the view was when the input opened
	wrap     bool
	stamps   bool
	full     bool
	width    int
	height   int
}

func newLogView(c *common) logView {
	in := textinput.New()
	in.PromptStyle = c.st.prompt
	in.PlaceholderStyle = c.st.muted
	in.Cursor.SetMode(textcursor.CursorStatic) // no blink: no redraws for it
	return logView{c: c, keys: newLogKeys(), input: in}
}

// setSize sets the rows and columns the log is drawn in.
func (v logView) setSize(w, h int) logView {
	v.width, v.height = w, max(h, 1)
	if v.follow {
		v.top = v.bottomTop()
	}
	v.top = min(v.top, v.bottomTop())
	return v
}

// show replaces what the view shows with another run's output (or
// another state of it), keeping the search, which then applies to it.
// Live output opens following its end; a saved log at its start.
func (v logView) show(name string, head, lines []string, times []int64, live bool) logView {
	v.name, v.head, v.lines, v.times, v.live = name, head, lines, times, live
	v.total, v.newLines, v.top, v.follow = len(lines), 0, 0, live
	v.find = v.find.over(v.lines)
	v = v.refilter()
	if live {
		v.top = v.bottomTop()
	}
	return v
}

// grow takes the live output again after new lines came: total is how
// many it was ever given. Not following, the rows on screen stay put,
// also when the oldest lines were dropped to make room.
func (v logView) grow(head, lines []string, times []int64, total int) logView {
	added := total - v.total
	dropped := max(len(v.lines)+added-len(lines), 0)
	anchor := v.lineAt(v.top)
	v.head, v.lines, v.times, v.total = head, lines, times, total
	v.find = v.find.over(v.lines)
	v = v.refilter()
	if v.follow {
		v.top = v.bottomTop()
		return v
	}
	v.newLines += added
	if anchor >= 0 {
		v.top = v.rowOf(max(anchor-dropped, 0))
	}
	v.top = min(v.top, v.bottomTop())
	return v
}

// rows is the number of rows of the log: head, then the lines shown.
func (v logView) rows() int {
	if v.shown != nil {
		return len(v.head) + len(v.shown)
	}
	return len(v.head) + len(v.lines)
}

// lineAt is the line of row r, -1 for a head row.
func (v logView) lineAt(r int) int {
	r -= len(v.head)
	switch {
	case r < 0:
		return -1
	case v.shown != nil && r < len(v.shown):
		return v.shown[r]
	case v.shown != nil:
		return -1
	}
	return r
}

// rowOf is the row of line i, or of the first shown line after it.
func (v logView) rowOf(i int) int {
	if v.shown == nil {
		return len(v.head) + i
	}
	k, _ := slices.BinarySearch(v.shown, i)
	return len(v.head) + k
}

// textWidth is the cells a line's text has after its mark and time.
func (v logView) textWidth() int {
	w := v.width - 2
	if v.stamps && v.times != nil {
		w -= len(stampLayout) + 1
	}
	return max(w, 1)
}

// rowHeight is the screen rows row r takes: 1, or its wrapped lines'.
func (v logView) rowHeight(r int) int {
	i := v.lineAt(r)
	if !v.wrap || i < 0 {
		return 1
	}
	_, text := splitLine(v.lines[i])
	return max(1, (ansi.StringWidth(text)+v.textWidth()-1)/v.textWidth())
}

// bottomTop is the top row that shows the log's end at the bottom.
func (v logView) bottomTop() int {
	room, r := v.height, v.rows()
	for r > 0 && room >= v.rowHeight(r-1) {
		room -= v.rowHeight(r - 1)
		r--
	}
	if r == v.rows() { // a last row taller than the pane: its start
		return max(r-1, 0)
	}
	return r
}

// fitFrom is how many rows from top fit on screen, at least one.
func (v logView) fitFrom(top int) int {
	room, n := v.height, 0
	for r := top; r < v.rows() && room >= v.rowHeight(r); r++ {
		room -= v.rowHeight(r)
		n++
	}
	return max(n, 1)
}

// scroll moves the view by n rows (up when negative); moving up stops
// following, and only G takes it up again.
func (v logView) scroll(n int) logView {
	if n < 0 && v.top > 0 {
		v.follow = false
	}
	v.top = max(0, min(v.top+n, v.bottomTop()))
	return v
}

// pageUp moves up by what one screen shows above the top.
func (v logView) pageUp() logView {
	room, r := v.height, v.top
	for r > 0 && room >= v.rowHeight(r-1) {
		room -= v.rowHeight(r - 1)
		r--
	}
	return v.scroll(min(r-v.top, -1))
}

// followEnd goes to the end and follows it.
func (v logView) followEnd() logView {
	v.follow, v.newLines = v.live, 0
	v.top = v.bottomTop()
	return v
}

// View draws the rows on screen, exactly the pane's height.
func (v logView) View() string {
	out := make([]string, 0, v.height)
	for r := v.top; r < v.rows() && len(out) < v.height; r++ {
		i := v.lineAt(r)
		if i < 0 {
			out = append(out, fit(v.head[r], v.width))
			continue
		}
		out = append(out, v.drawLine(i)...)
	}
	return pad(out, v.height)
}

// state says where the view is and what it does, for the pane's title:
// following or paused (and what came since), the search, the toggles.
func (v logView) state() string {
	var parts []string
	if s := v.find.state(v.shown != nil); s != "" {
		parts = append(parts, s)
	}
	switch {
	case v.live && v.follow:
		parts = append(parts, "following")
	case v.live && v.newLines > 0:
		parts = append(parts, "paused — G to follow, "+plural(v.newLines, "new line"))
	case v.live:
		parts = append(parts, "paused — G to follow")
	case v.rows() > v.height:
		parts = append(parts, strconv.Itoa(min(v.top+v.fitFrom(v.top), v.rows())*100/v.rows())+"%")
	}
	if v.stamps && v.times == nil && len(v.lines) > 0 {
		parts = append(parts, "saved logs carry no times")
	}
	if v.wrap {
		parts = append(parts, "wrap")
	}
	return strings.Join(parts, " · ")
}

// title is the pane's title line: the rule with its state, or the
// search's input while it is typed.
func (v logView) title(name string) string {
	if v.inputFor != 0 { // the count follows the keys typed
		right := v.find.state(v.find.filter)
		if right != "" {
			right = " " + v.c.st.muted.Render(right)
		}
		rw := ansi.StringWidth(right)
		in := v.input
		in.Width = max(v.width-rw-6, 1)
		return fit(fit(v.c.st.section.Render("── ")+in.View(), max(v.width-rw, 0))+right, v.width)
	}
	return rule(v.c.st, name, v.c.st.muted.Render(v.state()), v.width)
}
