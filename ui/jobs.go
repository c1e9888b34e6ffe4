package ui

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"cronvisor/internal/ctl"
)

// jobsKeys are the jobs table's bindings.
type jobsKeys struct {
	listKeys
	actionKeys
	Open, Sort, Filter key.Binding
}

func newJobsKeys() jobsKeys {
	return jobsKeys{
		listKeys:   newListKeys(),
		actionKeys: newActionKeys(),
		Open:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Sort:       key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
		Filter:     newFilterKeys().Filter,
	}
}

// ShortHelp implements help.KeyMap.
func (k jobsKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Open, k.Run, k.Pause, k.Kill, k.Filter, k.Sort}
}

// FullHelp implements help.KeyMap.
func (k jobsKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.column(), {k.Open, k.Filter, k.Sort}, {k.Run, k.Pause, k.Kill}}
}

// sortKey orders the jobs table.
type sortKey int

const (
	byName sortKey = iota
	byNext
	byState
	byLast
	sortKeys
)

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
	keys  jobsKeys
	sort  sortKey
	nameW int
}

func newJobsView(c *common) jobsView {
	// The table's chrome: its header, and the selected job's two lines
	// under a blank one.
	return jobsView{list: newList(c, 4, func(r int) string { return c.data.jobs[r].name }), keys: newJobsKeys()}
}

// SetSize sets the area the view draws in.
func (v jobsView) SetSize(w, h int) jobsView {
	v.list = v.list.setSize(w, h)
	return v
}

// KeyMap is the table's keys.
func (v jobsView) KeyMap() help.KeyMap { return v.keys }

// Update handles keys and mouse for the table.
func (v jobsView) Update(msg tea.Msg) (jobsView, tea.Cmd) {
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
		v.sort = (v.sort + 1) % sortKeys
		return v.Refresh(), nil
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
	v.nameW = len("NAME")
	for i, j := range jobs {
		v.nameW = max(v.nameW, len(j.name))
		if v.filter.match(j.name, j.schedule, string(j.state), string(j.last), j.lock) {
			rows = append(rows, i)
		}
	}
	slices.SortStableFunc(rows, func(a, b int) int { return compareJobs(jobs[a], jobs[b], v.sort) })
	v.list = v.setRows(rows)
	v.keys.actionKeys.fit(v.ref(), v.c.readOnly)
	return v
}

func compareJobs(a, b jobRow, by sortKey) int {
	var c int
	switch by {
	case byNext: // soonest first; none last
		switch {
		case a.nextRun == 0 && b.nextRun != 0:
			c = 1
		case a.nextRun != 0 && b.nextRun == 0:
			c = -1
		default:
			c = cmp.Compare(a.nextRun, b.nextRun)
		}
	case byState:
		c = cmp.Compare(stateRank(a.state), stateRank(b.state))
	case byLast: // latest activity first
		c = cmp.Compare(b.lastEndedAt, a.lastEndedAt)
	}
	if c == 0 {
		c = strings.Compare(a.name, b.name)
	}
	return c
}

func stateRank(s ctl.JobState) int {
	return slices.Index([]ctl.JobState{ctl.StateUnschedulable, ctl.StateRunning, ctl.StateQueued, ctl.StatePaused, ctl.StateIdle, ctl.StateDisabled}, s)
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

func (v jobsView) columns() []column {
	sortMark := func(title string, k sortKey) string {
		if v.sort == k {
			return title + " ▾"
		}
		return title
	}
	return []column{
		{title: sortMark("NAME", byName), min: 8, want: min(v.nameW, 16), max: v.nameW, grow: 2},
		{title: "SCHEDULE", min: 9, want: 11, max: 14, drop: 3, grow: 5},
		{title: sortMark("STATE", byState), min: 9, want: 11, max: v.stateMax(), grow: 3},
		{title: sortMark("LAST", byLast), min: 9, want: 13, max: 14, grow: 4},
		// TOOK (tookCol): the newest runs' durations as bars, as many as
		// fit; it gives way after the counters and the schedule, and
		// widens last, up to 16 bars and the newest run's duration.
		{title: "TOOK", min: 4, want: 6, max: recentMax + len(" 1m05s"), drop: 2, grow: 8},
		{title: sortMark("NEXT", byNext), min: 5, want: 6, max: 8, grow: 6},
		{title: "LOCK HOLDER", min: 12, want: 18, max: 30, drop: 1, grow: 1},
		{title: "RUN/SKIP/FAIL", min: 13, want: 13, max: 14, drop: 4, grow: 7},
	}
}

// tookCol is the TOOK column's place in columns.
const tookCol = 4

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
	cols := v.columns()
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
		cells = v.cells(cells[:0], v.c.data.at(r), v.c.data.jobs[r].learned, widths[tookCol])
		lines = append(lines, cachedRow(v.c.st, &v.c.cells, v.c.lost, cells, widths, i == v.cur.pos, v.width))
	}
	return pad(lines, v.height-3) + "\n\n" + v.summary()
}

// cells appends one job's table cells to dst, with its learned
// durations in a TOOK column tookW wide.
func (v jobsView) cells(dst []cell, j ctl.JobStatus, l *learned, tookW int) []cell {
	now := v.c.now()
	next := cell{text: countdown(now, j.NextRun), id: mutedID}
	if j.State == ctl.StatePaused || j.State == ctl.StateDisabled || j.Paused {
		next.text = "—"
	} else if !j.NextRun.IsZero() {
		next.id = runPlainID
	}
	last := cell{text: "—", id: mutedID}
	if j.LastOutcome != "" {
		last = cell{text: glyph(j.LastOutcome) + " " + string(j.LastOutcome) + " " + dur(now.Sub(j.LastEndedAt)),
			id: outcomeID(j.LastOutcome)}
		if j.LastEndedAt.IsZero() {
			last.text = glyph(j.LastOutcome) + " " + string(j.LastOutcome)
		}
	}
	return append(dst,
		cell{text: j.Name, id: plainID},
		cell{text: j.Schedule, id: mutedID},
		cell{text: stateText(j, now), id: stateID(j.State)},
		last,
		tookCell(l, tookW),
		next,
		holderCell(j, now),
		cell{text: countsCell(j.Counts), id: mutedID},
	)
}

// countsCell is the RUN/SKIP/FAIL cell; "—" when no daemon ever counted
// (a state dir read without one has no counters).
func countsCell(c ctl.Counts) string {
	if c.Since.IsZero() {
		return "—"
	}
	return strconv.Itoa(c.Runs) + "/" + strconv.Itoa(c.Skips) + "/" + strconv.Itoa(c.Failures)
}
