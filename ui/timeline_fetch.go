package ui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// timelineMsg is a read of a window's history for the timeline: of all
// jobs at once (jobs nil, one page), or of each of jobs.
type timelineMsg struct {
	since time.Time
	jobs  []string
	pages [][]run.Record
	err   error
}

// timelineFocused reports whether the timeline is on screen, when the
// digits pick its window instead of a tab.
func (m Model) timelineFocused() bool { return m.tab == tabTimeline && !m.inDetail }

// timelineDue starts the read of what the lanes on screen lack of the
// window's history: first one of all jobs (a quiet history is whole in
// it), then one of each job on screen that it did not cover. The events
// keep what was read current, so nothing is read twice for one window.
func (m Model) timelineDue() (Model, tea.Cmd) {
	x := m.c.data.tl
	if !m.timelineFocused() || !m.loaded || m.conn.lost || x.pending[""] {
		return m, nil
	}
	start, _ := m.tl.span(m.c.now())
	if x.askedAll == 0 || x.askedAll > start {
		x.askedAll, x.pending[""] = start, true
		return m, m.fetchTimeline(unixTime(start), nil)
	}
	var names []string
	for _, n := range m.tl.shownJobs() {
		if s := x.since(n); (s == 0 || s > start) && !x.pending[n] && (x.asked[n] == 0 || x.asked[n] > start) {
			names = append(names, n)
			x.pending[n], x.asked[n] = true, start
		}
	}
	if len(names) == 0 {
		return m, nil
	}
	return m, m.fetchTimeline(unixTime(start), names)
}

// fetchTimeline reads the history since since: of all jobs when jobs is
// nil, else of each of jobs.
func (m Model) fetchTimeline(since time.Time, jobs []string) tea.Cmd {
	src, parent := m.src, m.ctx
	return func() tea.Msg {
		ctx, cancel := bounded(parent)
		defer cancel()
		msg := timelineMsg{since: since, jobs: jobs}
		if jobs == nil {
			recs, err := src.History(ctx, ctl.HistoryQuery{Since: since, Limit: tlPage})
			msg.pages, msg.err = [][]run.Record{recs}, err
			return msg
		}
		for _, j := range jobs {
			recs, err := src.History(ctx, ctl.HistoryQuery{Job: j, Since: since, Limit: tlJobMax})
			if err != nil {
				msg.err = err
				return msg
			}
			msg.pages = append(msg.pages, recs)
		}
		return msg
	}
}

// onTimeline handles the timeline's messages to the root: a view's need
// of history, or a read of it.
func (m Model) onTimeline(msg tea.Msg) (Model, tea.Cmd) {
	read, ok := msg.(timelineMsg)
	if !ok {
		return m.timelineDue()
	}
	x := m.c.data.tl
	delete(x.pending, "")
	for _, j := range read.jobs {
		delete(x.pending, j)
	}
	if read.err != nil { // not asked again for this window: a read a second would not fare better
		if gone(read.err) {
			return m.lose(read.err)
		}
		return m.say("cannot read history: "+read.err.Error(), true), nil
	}
	if read.jobs == nil {
		x.addAll(read.pages[0])
		x.coveredAll = coverage(read.since, read.pages[0], tlPage)
	}
	for i, j := range read.jobs {
		x.addAll(read.pages[i])
		c := coverage(read.since, read.pages[i], tlJobMax)
		if old, ok := x.covered[j]; ok {
			c = min(c, old)
		}
		x.covered[j] = c
	}
	m.tl = m.tl.Refresh()
	return m.timelineDue()
}

// openRun opens the job's detail with one of its past runs selected.
func (m Model) openRun(msg openRunMsg) (Model, tea.Cmd) {
	m.inDetail = true
	m.detail = m.detail.open(msg.job)
	var cmd tea.Cmd
	m.detail, cmd = m.detail.openAt(msg.rec)
	return m.layout(), tea.Batch(m.fetchHistory(msg.job), cmd)
}

// openAt selects r, which the job's page of history may not hold (it
// is older than its newest runs): it stays, last, as a selected record
// that falls off the page does.
func (v detailView) openAt(r run.Record) (detailView, tea.Cmd) {
	v.recs = []run.Record{r}
	return v.pick(1)
}

// forget drops what the index knows it covers, keeping its spans: after
// a whole read (a reconnect, a resync) events may have been missed.
func (x *tlIndex) forget() {
	clear(x.covered)
	clear(x.asked)
	x.coveredAll, x.askedAll = 0, 0
}
