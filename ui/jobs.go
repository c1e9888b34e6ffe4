package ui

import (
	"slices"
	"strconv"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"cronvisor/internal/ctl"
)

// jobsKeys are the jobs table's bindings.
type jobsKeys struct {
	listKeys
	actionKeys
	Open, Sort, SortBy, Columns, Filter key.Binding
}

func newJobsKeys() jobsKeys {
	return jobsKeys{
		listKeys:   newListKeys(),
		actionKeys: newActionKeys(),
		Open:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Sort:       key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
		SortBy:     sortBinding(),
		Columns:    key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "columns")),
		Filter:     newFilterKeys().Filter,
	}
}

// ShortHelp implements help.KeyMap.
func (k jobsKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Open, k.Run, k.Pause, k.Kill, k.Filter, k.Sort}
}

// FullHelp implements help.KeyMap.
func (k jobsKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.column(), {k.Open, k.Filter, k.Sort, k.SortBy, k.Columns}, {k.Run, k.Pause, k.Kill}}
}

// Messages from views to the root model.
type (
	openJobMsg     struct{ job string }
	closeDetailMsg struct{}
	requestMsg     struct{ verb, job string } // an action, confirmed by root if destructive
)

func send(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }

// jobsView is the table of all jobs.
type jobsView struct {
	list
	keys    jobsKeys
	sort    colSort
	hidden  [jobColCount]bool // the columns the operator turned off
	chooser chooser           // the column chooser, when open
	nameW   int
	lastW   int // the LAST column's: its longest outcome
}

func newJobsView(c *common) jobsView {
	// The table's chrome: its header, and the selected job's two lines
	// under a blank one.
	return jobsView{list: newList(c, 4, func(r int) string { return c.data.jobs[r].name }), keys: newJobsKeys(),
		sort: colSort{by: colJob}}
}

// SetSize sets the area the view draws in.
func (v jobsView) SetSize(w, h int) jobsView {
	v.list = v.list.setSize(w, h)
	return v
}

// KeyMap is the table's keys.
func (v jobsView) KeyMap() help.KeyMap { return v.chooserHelp() }

// Update handles keys and mouse for the table.
func (v jobsView) Update(msg tea.Msg) (jobsView, tea.Cmd) {
	if v.chooser.open {
		return v.chooserKey(msg)
	}
	l, cmd, done := v.list.update(v.keys.listKeys, msg)
	v.list = l
	switch done {
	case refilter:
		return v.Refresh(), cmd
	case handled:
		v.keys.actionKeys.fit(v.ref(), v.c.readOnly)
		return v, cmd
	}
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return v, nil
	}
	j := v.ref()
	switch {
	case key.Matches(km, v.keys.Sort):
		v.sort = v.sort.cycled()
		return v.Refresh(), v.keep()
	case key.Matches(km, v.keys.SortBy):
		c, _ := sortedBy(km.String())
		v.sort = v.sort.pressed(c)
		return v.Refresh(), v.keep()
	case key.Matches(km, v.keys.Columns):
		v.chooser = chooser{open: true}
		return v, nil
	case j == nil:
		return v, nil
	case key.Matches(km, v.keys.Open):
		return v, send(openJobMsg{job: j.name})
	case key.Matches(km, v.keys.Run):
		return v, send(requestMsg{verb: "run", job: j.name})
	case key.Matches(km, v.keys.Pause) && j.paused:
		return v, send(requestMsg{verb: "resume", job: j.name})
	case key.Matches(km, v.keys.Pause):
		return v, send(requestMsg{verb: "pause", job: j.name})
	case key.Matches(km, v.keys.Kill) && v.keys.Kill.Enabled():
		return v, send(requestMsg{verb: "kill", job: j.name})
	}
	return v, nil
}

// Refresh rebuilds the rows from the store; the root model calls it after
// every change of the store.
func (v jobsView) Refresh() jobsView {
	jobs := v.c.data.jobs
	rows := make([]int, 0, len(jobs))
	v.nameW, v.lastW = len("JOB"), len("LAST")
	for i, j := range jobs {
		v.nameW = max(v.nameW, len(j.name))
		v.lastW = max(v.lastW, outcomeWidth(j.last))
		if v.filter.match(j.name, j.schedule, string(j.state), string(j.last), j.lock) {
			rows = append(rows, i)
		}
	}
	slices.SortStableFunc(rows, func(a, b int) int { return compareJobs(jobs[a], jobs[b], v.sort) })
	v.list = v.setRows(rows)
	v.keys.actionKeys.fit(v.ref(), v.c.readOnly)
	return v
}

// ref describes the selected job for the action keys; nil for none.
func (v jobsView) ref() *jobRef {
	r, ok := v.row()
	if !ok {
		return nil
	}
	j := v.c.data.jobs[r]
	return &jobRef{name: j.name, running: j.state == ctl.StateRunning, paused: j.paused}
}

// shownCols are the columns on, in their order.
func (v jobsView) shownCols() []jobCol {
	out := make([]jobCol, 0, jobColCount)
	for c := range jobCol(jobColCount) {
		if !v.hidden[c] {
			out = append(out, c)
		}
	}
	return out
}

// columns are the shown columns' layouts, titled, with the widths that
// depend on the rows: the job's name, the longest outcome, the state.
func (v jobsView) columns(shown []jobCol) []column {
	cols := make([]column, len(shown))
	for i, c := range shown {
		col := jobColDefs[c].col
		col.title = v.sort.title(c)
		switch c {
		case colJob:
			col.want, col.max = min(v.nameW, 14), v.nameW
		case colLast:
			col.min, col.want, col.max = v.lastW, v.lastW, v.lastW
		case colState:
			col.max = v.stateMax()
		}
		// A title and its sort arrow are never cut either.
		col.min = max(col.min, ansi.StringWidth(col.title))
		col.want, col.max = max(col.want, col.min), max(col.max, col.min)
		cols[i] = col
	}
	return cols
}

// stateMax is the STATE column's widest: room for "↺ retry 2/3 at
// 10:19:03" while a slot waits for a retry, else a running job's
// elapsed/timeout.
func (v jobsView) stateMax() int {
	if v.c.data.count().retrying > 0 {
		return 23
	}
	return 14
}

// View draws the table.
func (v jobsView) View() string {
	if v.chooser.open {
		return v.chooserView()
	}
	shown := v.shownCols()
	cols := v.columns(shown)
	widths := layout(cols, v.width-2)
	lines := append(append(make([]string, 0, v.height), v.head()...), headerRow(v.c.st, cols, widths, v.width))
	if len(v.rows) == 0 {
		empty := "  no jobs"
		if v.filter.active() {
			empty = "  no jobs match the filter"
		}
		lines = append(lines, v.c.st.muted.Render(empty))
	}
	from, to := v.shown()
	var cells []cell // one row's at a time: cachedRow keeps none
	for i := from; i < to; i++ {
		r := v.rows[i]
		cells = v.cells(cells[:0], shown, v.c.data.at(r), v.c.data.jobs[r].learned, widths)
		lines = append(lines, cachedRow(v.c.st, &v.c.cells, v.c.lost, cells, widths, i == v.cur.pos, v.width))
	}
	return pad(lines, v.height-3) + "\n\n" + v.summary()
}

// cells appends one job's cells of the shown columns to dst, each cut
// to its width in widths (with its learned durations in TOOK).
func (v jobsView) cells(dst []cell, shown []jobCol, j ctl.JobStatus, l *learned, widths []int) []cell {
	now := v.c.now()
	for i, c := range shown {
		dst = append(dst, v.colCell(c, j, l, widths[i], now))
	}
	return dst
}

// countsCell is the RUN/SKIP/FAIL cell; "—" when no daemon ever counted
// (a state dir read without one has no counters).
func countsCell(c ctl.Counts) string {
	if c.Since.IsZero() {
		return "—"
	}
	return strconv.Itoa(c.Runs) + "/" + strconv.Itoa(c.Skips) + "/" + strconv.Itoa(c.Failures)
}
