package ui

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"cronvisor/internal/base/run"
)

// historyKeys are the history view's bindings.
type historyKeys struct {
	listKeys
	Filter, Outcome, Open key.Binding
}

// ShortHelp implements help.KeyMap.
func (k historyKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Move, k.Open, k.Filter, k.Outcome}
}

// FullHelp implements help.KeyMap.
func (k historyKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.column(), {k.Open, k.Filter, k.Outcome}}
}

// outcomeFilter is one step of the o key's cycle.
type outcomeFilter struct {
	name     string
	outcomes []run.Outcome // nil: all
}

var outcomeFilters = [...]outcomeFilter{
	{name: "all"},
	{name: "skipped", outcomes: []run.Outcome{run.Skipped}},
	{name: "problems", outcomes: []run.Outcome{run.Failed, run.Timeout,
		run.Error, run.Interrupted, run.Replaced}},
	{name: "ok", outcomes: []run.Outcome{run.OK}},
}

// stripMax is the most fires a timeline strip shows.
const stripMax = 60

// historyView is runs and skips over time: a timeline strip per job and
// the records, newest first, filterable by job and outcome. Its rows are
// positions in c.data.records.
type historyView struct {
	list
	keys    historyKeys
	outcome int     // index into outcomeFilters
	strips  []strip // one per job in the filter, most recent first
	nameW   int
}

// strip is one job's last fires, oldest first.
type strip struct {
	job      string
	outcomes []run.Outcome
}

func newHistoryView(c *common) historyView {
	// Rows are named by the record's identity: new records arrive at the
	// top, and the cursor stays on the record it is on.
	return historyView{list: newList(c, 3, func(r int) string { return recKey(c.data.records[r]) }), keys: historyKeys{
		listKeys: newListKeys(),
		Filter:   newFilterKeys().Filter,
		Outcome:  key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "outcomes")),
		Open:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open job")),
	}}
}

// SetSize sets the area the view draws in.
func (v historyView) SetSize(w, h int) historyView {
	v.width, v.height = w, h
	return v.fitChrome()
}

// fitChrome gives the list what the strips and the two rules leave; the
// strips take up to a third of the view.
func (v historyView) fitChrome() historyView {
	v.chrome = v.stripRows() + 3
	v.above = v.chrome // the rules, the strips and the header
	v.cur.fit(len(v.rows), v.listHeight())
	return v
}

// KeyMap is the view's keys.
func (v historyView) KeyMap() help.KeyMap { return v.keys }

// Update handles keys and mouse.
func (v historyView) Update(msg tea.Msg) (historyView, tea.Cmd) {
	l, cmd, done := v.list.update(v.keys.listKeys, msg)
	v.list = l
	switch done {
	case refilter:
		return v.Refresh(), cmd
	case handled:
		return v, cmd
	}
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return v, nil
	}
	switch {
	case key.Matches(km, v.keys.Outcome):
		v.outcome = (v.outcome + 1) % len(outcomeFilters)
		v.cur, v.selected = cursor{}, ""
		return v.Refresh(), nil
	case key.Matches(km, v.keys.Open) && len(v.rows) > 0:
		return v, send(openJobMsg{job: v.c.data.records[v.rows[v.cur.pos]].Job})
	}
	return v, nil
}

// Refresh rebuilds the rows and strips from the store. The cursor stays on
// the record it was on, wherever new records put it.
func (v historyView) Refresh() historyView {
	recs := v.c.data.records
	want := outcomeFilters[v.outcome].outcomes
	rows := make([]int, 0, len(recs))
	byJob := map[string][]run.Outcome{}
	for i, r := range recs {
		if r.Outcome == run.Running {
			continue
		}
		if o := byJob[r.Job]; len(o) < stripMax && v.filter.match(r.Job) {
			byJob[r.Job] = append(o, r.Outcome)
		}
		if want != nil && !slices.Contains(want, r.Outcome) {
			continue
		}
		if !v.filter.active() || v.filter.match(r.Job, string(r.Outcome), r.Reason, recordDetail(r)) {
			rows = append(rows, i)
		}
	}
	v.strips, v.nameW = make([]strip, 0, len(byJob)), len("JOB")
	for _, r := range recs { // newest first, so strips come most recent first
		if o, ok := byJob[r.Job]; ok {
			slices.Reverse(o)
			v.strips = append(v.strips, strip{job: r.Job, outcomes: o})
			delete(byJob, r.Job)
			v.nameW = max(v.nameW, len(r.Job))
		}
	}
	v = v.fitChrome()
	pos, off, kept := v.cur.pos, v.cur.off, v.selected
	v.list = v.setRows(rows)
	if kept != "" && v.selected == kept && off > 0 {
		// Scrolled down, the window moves with the selected record, so
		// that the rows under the user's eyes stay put as newer ones
		// arrive above (and newer says so). At the top it stays there:
		// the newer rows show above the selection as they come.
		v.cur.off = max(off+v.cur.pos-pos, 0)
		v.cur.fit(len(v.rows), v.listHeight())
	}
	return v
}

// top puts the cursor on the newest row, as the tab is shown. While the
// tab is away its selection keeps following its record, which new records
// push down: without this the tab opened scrolled down, the newest rows
// hidden above.
func (v historyView) top() historyView {
	v.cur, v.selected = cursor{}, ""
	return v.Refresh()
}

// newer says how many rows, all newer than those shown, are above the
// window; "" when none is.
func (v historyView) newer() string {
	if v.cur.off == 0 {
		return ""
	}
	return "↑ " + strconv.Itoa(v.cur.off) + " newer (g) · "
}

// stripRows is how many timeline strips fit: up to a third of the view.
func (v historyView) stripRows() int {
	return min(len(v.strips), max(2, (v.height-4)/3))
}

// View draws the strips and the records.
func (v historyView) View() string {
	st := v.c.st
	lines := v.head()
	legend := st.ok.Render("● ok") + " " + st.warn.Render("○ skipped") + " " +
		st.fail.Render("✗ failed") + " " + st.fail.Render("⧖ timeout")
	lines = append(lines, rule(st, "timeline, newest right", legend, v.width))
	lines = append(lines, v.stripLines()...)
	count := v.c.st.warn.Render(v.newer()) + strconv.Itoa(len(v.rows)) + " shown"
	lines = append(lines, rule(st, "runs and skips · outcome: "+outcomeFilters[v.outcome].name+" (o)", count, v.width))
	now := v.c.now()
	from, end := v.shown()
	var times []time.Time
	for _, i := range v.rows[from:end] {
		times = append(times, startTime(v.c.data.records[i]))
	}
	timeW := clockWidth(now, times...) // of the rows shown: most lists are of today
	cols := []column{
		{title: "TIME", min: 8, want: timeW, max: timeW, grow: 3},
		{title: "JOB", min: 8, want: min(v.nameW, 16), max: v.nameW, grow: 2},
		{title: "OUTCOME", min: 9, want: 11, max: 13, grow: 4},
		{title: "TOOK", min: 4, want: 6, max: 6, drop: 1, grow: 5},
		{title: "DETAIL", min: 10, want: 30, max: 200, grow: 1},
	}
	hostW := v.hostWidth()
	if hostW > 0 {
		cols = slices.Insert(cols, 2, column{title: "HOST", min: 4, want: hostW, max: hostW, drop: 2, grow: 6})
	}
	widths := layout(cols, v.width-2)
	lines = append(lines, headerRow(st, cols, widths, v.width))
	if len(v.rows) == 0 {
		lines = append(lines, st.muted.Render("  no records"))
	}
	for i := from; i < end; i++ {
		r := v.c.data.records[v.rows[i]]
		rc := recordCells(st, now, r)
		cells := []cell{rc[1], {text: r.Job}, rc[0], rc[2], rc[3]}
		if hostW > 0 {
			cells = slices.Insert(cells, 2, cell{text: shortHost(r.Host)})
		}
		lines = append(lines, row(st, cells, widths, i == v.cur.pos, v.width))
	}
	return pad(lines, v.height)
}

// hostWidth is the width of the HOST column: 0 (no column) while every
// record is of one host, as on a host without a shared history; with a
// fleet's history, the widest short host name.
func (v historyView) hostWidth() int {
	first, w, many := "", 0, false
	for _, i := range v.rows {
		h := shortHost(v.c.data.records[i].Host)
		if first == "" {
			first = h
		}
		many = many || h != first
		w = max(w, len(h))
	}
	if !many {
		return 0
	}
	return min(max(w, len("HOST")), 20)
}

// stripLines draws the timeline strips, glyphs of one outcome styled
// together to keep the render cheap.
func (v historyView) stripLines() []string {
	st := v.c.st
	n := v.stripRows()
	nameW := 4
	for _, s := range v.strips[:n] {
		nameW = max(nameW, min(len(s.job), 20))
	}
	room := max(v.width-nameW-5, 1)
	lines := make([]string, 0, n)
	for i, s := range v.strips[:n] {
		if i == n-1 && n < len(v.strips) {
			lines = append(lines, fit(st.muted.Render("  … and "+plural(len(v.strips)-n+1, "more job")+"; / narrows to one"), v.width))
			break
		}
		o := s.outcomes[max(0, len(s.outcomes)-room):]
		var b strings.Builder
		for j := 0; j < len(o); {
			k := j
			for k < len(o) && o[k] == o[j] {
				k++
			}
			b.WriteString(st.outcome(o[j]).Render(strings.Repeat(glyph(o[j]), k-j)))
			j = k
		}
		lines = append(lines, fit("  "+fit(s.job, nameW)+"  "+b.String(), v.width))
	}
	return lines
}

// rule is a section line: ── title ───── right ─
func rule(st styles, title, right string, width int) string {
	left := "── " + title + " "
	rw := 0
	if right != "" {
		rw = ansi.StringWidth(right) + 3
		right = " " + right + st.muted.Render(" ─")
	}
	fill := max(width-len([]rune(left))-rw, 0)
	return fit(st.section.Render(left)+st.muted.Render(strings.Repeat("─", fill))+right, width)
}
