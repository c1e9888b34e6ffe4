package ui

import (
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// The Jobs tab shows the selected job's preview beside the table on a
// wide terminal and under it on a narrow one, so that a tall window is
// not a few rows of table above empty lines. The table keeps priority:
// beside it, the preview takes only the columns the table cannot use
// (every column at its widest); under it, only the lines its rows leave.

const (
	// sideFrom is the width from which the preview may sit beside the
	// table; below it the table needs every column it has.
	sideFrom = 100
	// sideMin and sideMax bound the preview's width beside the table.
	sideMin, sideMax = 36, 72
	// belowMin is the fewest lines the preview is worth under the table:
	// its title, the run, the lock, the next fire and two runs.
	belowMin = 6
	// tableChrome is the jobs table's lines besides its rows: the header,
	// a blank line and the selected job's two summary lines.
	tableChrome = 4
	// lastRunsMax is the most runs the preview lists; the room under
	// them shows the live output's newest lines.
	lastRunsMax = 10
	// previewLabel is the width of the preview's labels ("history  ").
	previewLabel = 9
)

// jobsSplit is how the Jobs tab shares its area between the table and
// the preview.
type jobsSplit struct {
	w, h           int // the tab's area
	tableW, tableH int
	paneW, paneH   int // 0: no preview
	side           bool
}

// splitJobs lays out a w×h tab whose table has rows rows (and a filter
// line when filtering) and uses at most tableMax columns.
func splitJobs(w, h, rows int, filtering bool, tableMax int) jobsSplit {
	s := jobsSplit{w: w, h: h, tableW: w, tableH: h}
	if room := w - tableMax - 1; w >= sideFrom && room >= sideMin { // a bar divides the two
		s.side, s.paneH = true, h
		s.paneW = min(room, sideMax)
		s.tableW = w - s.paneW - 1
		return s
	}
	need := max(rows, 1) + tableChrome
	if filtering {
		need++
	}
	if h-need >= belowMin {
		s.tableH, s.paneW, s.paneH = need, w, h-need
	}
	return s
}

// jobsPane is the Jobs tab: the table's pane, laid out with the preview.
type jobsPane struct {
	table field[jobsView]
}

func newJobsPane() jobsPane {
	return jobsPane{table: field[jobsView]{
		get: func(m Model) jobsView { return m.jobs },
		set: func(m Model, v jobsView) Model { m.jobs = v; return m },
	}}
}

func (p jobsPane) update(m Model, msg tea.Msg) (Model, tea.Cmd) {
	if mm, ok := msg.(tea.MouseMsg); ok && !m.split.onTable(mm) {
		return m, nil
	}
	m, cmd := p.table.update(m, msg)
	return m.fitJobs(), cmd
}

func (p jobsPane) view(m Model) string { return m.jobsTabView() }

func (p jobsPane) setSize(m Model, w, h int) Model {
	m.split.w, m.split.h = w, h
	return m.fitJobs()
}

func (p jobsPane) refresh(m Model) Model      { return p.table.refresh(m).fitJobs() }
func (p jobsPane) keyMap(m Model) help.KeyMap { return p.table.keyMap(m) }
func (p jobsPane) editing(m Model) bool       { return p.table.editing(m) }

// onTable reports whether a mouse event fell on the table: the preview
// takes no clicks, and the wheel over it scrolls nothing.
func (s jobsSplit) onTable(msg tea.MouseMsg) bool {
	return msg.X < s.tableW && msg.Y < s.tableH
}

// fitJobs lays the tab out again for the table's rows, which a filter or
// a reload changes.
func (m Model) fitJobs() Model {
	m.split = splitJobs(m.split.w, m.split.h, len(m.jobs.rows), m.jobs.filter.active(), tableMax(m.jobs.columns(m.jobs.shownCols())))
	m.jobs = m.jobs.SetSize(m.split.tableW, m.split.tableH)
	return m
}

// tableMax is the width a table of cols uses at the most: every column
// at its widest, the gaps and the selection's margin.
func tableMax(cols []column) int {
	w := 2 + colGap*(len(cols)-1)
	for _, c := range cols {
		w += c.max
	}
	return w
}

// jobsTabView draws the table and the preview where the split puts it.
func (m Model) jobsTabView() string {
	s, table := m.split, m.jobs.View()
	if s.paneH == 0 {
		return table
	}
	pane := m.preview(m.jobs.name(), s.paneW, s.paneH)
	if !s.side {
		return table + "\n" + strings.Join(pane, "\n")
	}
	left := strings.Split(table, "\n")
	bar := m.c.st.muted.Render("│")
	var b strings.Builder
	for i, r := range pane {
		if i > 0 {
			b.WriteByte('\n')
		}
		l := ""
		if i < len(left) {
			l = left[i]
		}
		b.WriteString(fit(l, s.tableW) + bar + r)
	}
	return b.String()
}

// preview is the job's summary in h lines of w cells: what its current
// run is, what holds its lock, when it fires next, then its last runs
// with their outcome and age. It reuses the detail's words.
func (m Model) preview(job string, w, h int) []string {
	st, now := m.c.st, m.c.now()
	j, ok := m.c.data.job(job)
	if !ok {
		return strings.Split(pad([]string{rule(st, "no job selected", "", w)}, h), "\n")
	}
	state := st.state(j.State).Render(stateGlyph(j.State) + " " + string(j.State))
	lines := []string{rule(st, j.Name, state, w)}
	for _, f := range [][2]string{{"run", runText(j, now)}, {"lock", lockText(st, j, now)},
		{"next", nextText(j, now)}, {"history", lastText(st, j, now) + st.muted.Render(" · "+countsText(j.Counts, now))}} {
		lines = append(lines, m.previewField(f[0], f[1], w)...)
	}
	if h-len(lines) >= 3 {
		lines = append(lines, rule(st, "last runs", st.muted.Render("enter: all"), w))
		lines = append(lines, m.lastRuns(j.Name, w, min(h-len(lines), lastRunsMax))...)
	}
	if tail := m.c.data.tail(j.Name); len(tail) > 0 && h-len(lines) >= 3 {
		lines = append(lines, rule(st, "output, newest last", "", w))
		for _, l := range tail[max(0, len(tail)-(h-len(lines))):] {
			lines = append(lines, fit(styleLogLine(st, l), w))
		}
	}
	return strings.Split(pad(lines, h), "\n")
}

// previewField is a labelled value, wrapped to two lines at most: a long
// lock holder's command line is cut, not the lines under it.
func (m Model) previewField(label, value string, w int) []string {
	room := max(w-previewLabel-1, 8)
	wrapped := strings.Split(ansi.Wordwrap(value, room, ""), "\n")
	if len(wrapped) > 2 {
		wrapped = wrapped[:2]
		wrapped[1] = ansi.Truncate(wrapped[1], room-1, "") + "…"
	}
	lines := make([]string, len(wrapped))
	for i, v := range wrapped {
		l := strings.Repeat(" ", previewLabel+1)
		if i == 0 {
			l = " " + m.c.st.label.Render(label+strings.Repeat(" ", previewLabel-len(label)))
		}
		lines[i] = fit(l+v, w)
	}
	return lines
}

// nextText is when the job fires next, in words.
func nextText(j ctl.JobStatus, now time.Time) string {
	switch {
	case j.State == ctl.StatePaused || j.Paused:
		return "none while paused"
	case !j.Enabled || j.State == ctl.StateDisabled:
		return "none: disabled"
	case j.NextRun.IsZero():
		return "none"
	}
	return clock(now, j.NextRun) + " (" + inTime(now, j.NextRun) + ") · " + j.Schedule
}

// lastRuns are the job's newest finished records, at most n, as the
// detail lists them but with their age rather than their time.
func (m Model) lastRuns(job string, w, n int) []string {
	st, now := m.c.st, m.c.now()
	widths := layout(recordColumns(len("59m59s")), w-2)
	var lines []string
	for _, r := range m.c.data.records {
		if len(lines) == n {
			break
		}
		if r.Job != job || r.Outcome == run.Running {
			continue
		}
		cells := recordCells(st, now, r)
		cells[1].text = dur(now.Sub(eventTime(r))) // an age, as the table's LAST
		lines = append(lines, row(st, cells, widths, false, w))
	}
	if len(lines) == 0 {
		lines = append(lines, st.muted.Render(fit("  no runs in recent history", w)))
	}
	return lines
}

// styleLogLine drops the stream tag of a log line ("stdout | text"), and
// marks stderr so that it stands out also without colour.
func styleLogLine(st styles, l string) string {
	switch kind, text := splitLine(l); kind {
	case 'e':
		return st.warn.Render("! " + text)
	case 'n':
		return st.muted.Render(text)
	default:
		return "  " + text
	}
}
