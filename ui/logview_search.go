package ui

import (
	"strings"
	"time"
	"unicode"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// search is the log's "/" search or "&" filter: the query, the lines
// that hold it and the match the view is on.
type search struct {
	query string
	// fold: the query has no upper-case letter, so case is ignored (as
	// less -i and vim's smartcase do).
	fold    bool
	matches []int // the lines holding the query, in order
	cur     int   // the match the view is on, an index in matches
	filter  bool  // "&": only the matching lines are shown
}

// with is s searching for q (over no lines yet).
func (s search) with(q string, filter bool) search {
	s.query, s.filter, s.cur, s.matches = q, filter && q != "", 0, nil
	s.fold = strings.ToLower(q) == q
	if s.fold {
		s.query = strings.ToLower(q)
	}
	return s
}

// over finds the query in lines. The current match stays at the line
// index it had, or the last match before it: more live lines leave it
// where it was.
func (s search) over(lines []string) search {
	if s.query == "" {
		s.matches = nil
		return s
	}
	was := -1
	if s.cur < len(s.matches) {
		was = s.matches[s.cur]
	}
	s.matches = s.matches[:0:0]
	s.cur = 0
	for i, l := range lines {
		if _, text := splitLine(l); s.in(text) {
			if i <= was {
				s.cur = len(s.matches)
			}
			s.matches = append(s.matches, i)
		}
	}
	return s
}

// in reports whether text holds the query.
func (s search) in(text string) bool {
	if !s.fold {
		return strings.Contains(text, s.query)
	}
	return indexFold(text, s.query) >= 0
}

// indexFold is strings.Index ignoring case for a lower-case query,
// without lowering (and allocating) each line: only lines with a
// non-ASCII byte take the slow way.
func indexFold(text, q string) int {
	for i := range len(text) {
		if text[i] >= 0x80 {
			return strings.Index(strings.ToLower(text), q)
		}
	}
	for i := 0; i+len(q) <= len(text); i++ {
		if asciiPrefixFold(text[i:], q) {
			return i
		}
	}
	return -1
}

func asciiPrefixFold(s, q string) bool {
	for j := range len(q) {
		c := s[j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != q[j] {
			return false
		}
	}
	return true
}

// ranges are where text holds the query, as byte ranges of text.
func (s search) ranges(text string) [][2]int {
	if s.query == "" {
		return nil
	}
	hay := text
	if s.fold {
		hay = strings.ToLower(text)
		if len(hay) != len(text) { // lowering moved the bytes; no marks
			return nil
		}
	}
	var out [][2]int
	for from := 0; ; {
		i := strings.Index(hay[from:], s.query)
		if i < 0 {
			return out
		}
		out = append(out, [2]int{from + i, from + i + len(s.query)})
		from += i + len(s.query)
	}
}

// state is the search's part of the pane's title: "/word 3/17".
func (s search) state(filtered bool) string {
	if s.query == "" {
		return ""
	}
	switch {
	case filtered:
		return "&" + s.query + " " + plural(len(s.matches), "line")
	case len(s.matches) == 0:
		return "/" + s.query + " no match"
	}
	return "/" + s.query + " " + itoa(s.cur+1) + "/" + itoa(len(s.matches))
}

// refilter shows only the matching lines while the filter is on.
func (v logView) refilter() logView {
	v.shown = nil
	if v.find.filter {
		v.shown = v.find.matches
		if v.shown == nil {
			v.shown = []int{}
		}
	}
	v.top = max(0, min(v.top, v.bottomTop()))
	return v
}

// jump makes match k the current one (wrapping around) and brings its
// line on screen, a third down, unless it is there already.
func (v logView) jump(k int) logView {
	n := len(v.find.matches)
	if n == 0 {
		return v
	}
	v.find.cur = ((k % n) + n) % n
	r := v.rowOf(v.find.matches[v.find.cur])
	if r >= v.top && r < v.top+v.fitFrom(v.top) {
		return v
	}
	v.follow = false
	v.top = max(0, min(r-v.height/3, v.bottomTop()))
	return v
}

// firstFrom is the first match at or below the top row, else the first.
func (v logView) firstFrom(top int) int {
	for k, i := range v.find.matches {
		if v.rowOf(i) >= top {
			return k
		}
	}
	return 0
}

// splitLine is a saved line's kind ('o' stdout, 'e' stderr, 'n' a note
// of cronvisor's) and its text, clean of what would break the screen.
func splitLine(raw string) (kind byte, text string) {
	switch {
	case strings.HasPrefix(raw, "stdout | "):
		kind, text = 'o', raw[len("stdout | "):]
	case strings.HasPrefix(raw, "stderr | "):
		kind, text = 'e', raw[len("stderr | "):]
	case strings.HasPrefix(raw, "── "), strings.HasPrefix(raw, "… ["):
		kind, text = 'n', raw
	default:
		kind, text = 'o', raw
	}
	return kind, clean(text)
}

// clean drops a job's escape sequences and control characters, which
// would move the cursor or restyle the console, and spaces out tabs.
func clean(s string) string {
	for i := range len(s) {
		if s[i] < 0x20 || s[i] == 0x7f {
			return strings.Map(func(r rune) rune {
				switch {
				case r == '\t':
					return ' '
				case unicode.IsControl(r):
					return -1
				}
				return r
			}, ansi.Strip(s))
		}
	}
	return s
}

// stampLayout is how a line's time is shown: to the millisecond, since
// the lines of one second are many.
const stampLayout = "15:04:05.000"

// drawLine is line i's rows: one, cut to the width, or wrapped.
func (v logView) drawLine(i int) []string {
	st := v.c.st
	kind, text := splitLine(v.lines[i])
	prefix, base := "  ", plain
	switch kind {
	case 'e':
		prefix, base = "! ", st.warn.Render
	case 'n':
		prefix, base = "", st.muted.Render
	}
	stamp := ""
	if v.stamps && v.times != nil {
		stamp = st.muted.Render(time.UnixMilli(v.times[i]).In(v.c.now().Location()).Format(stampLayout)) + " "
	}
	hl := st.match
	if k := v.find.cur; k < len(v.find.matches) && v.find.matches[k] == i {
		hl = st.matchCur
	}
	ranges := v.find.ranges(text)
	w := v.textWidth() + 2 - len(prefix)
	if !v.wrap {
		cut := len(ansi.Truncate(text, w, ""))
		row := stamp + base(prefix) + paint(text, 0, cut, ranges, base, hl)
		if cut < len(text) {
			row = stamp + base(prefix) + paint(text, 0, len(ansi.Truncate(text, w-1, "")), ranges, base, hl) + base("…")
		}
		return []string{row}
	}
	var rows []string
	for from := 0; from < len(text) || len(rows) == 0; {
		to := from + max(len(ansi.Truncate(text[from:], w, "")), 1)
		to = min(to, len(text))
		rows = append(rows, stamp+base(prefix)+paint(text, from, to, ranges, base, hl))
		stamp, prefix, from = strings.Repeat(" ", ansi.StringWidth(stamp)), "  "[:len(prefix)], to
	}
	return rows
}

// paint draws text[from:to], the parts in ranges with hl, the rest with
// base.
func paint(text string, from, to int, ranges [][2]int, base func(...string) string, hl matchPen) string {
	var b strings.Builder
	at := from
	for _, r := range ranges {
		a, z := max(r[0], from), min(r[1], to)
		if a >= z {
			continue
		}
		b.WriteString(base(text[at:a]))
		b.WriteString(hl.render(text[a:z]))
		at = z
	}
	b.WriteString(base(text[at:to]))
	return b.String()
}

// plain draws text as it is, the base of a stdout line.
func plain(s ...string) string { return strings.Join(s, "") }

// matchPen is how a search match is drawn: the theme's style, or reverse
// video by itself where the terminal shows no colours (NO_COLOR), which
// lipgloss drops together with every other attribute.
type matchPen struct {
	style lipgloss.Style
	sgr   string // "7": reverse video; "" uses style
}

func (k matchPen) render(s string) string {
	if k.sgr != "" {
		return "\x1b[" + k.sgr + "m" + s + "\x1b[m"
	}
	return k.style.Render(s)
}
