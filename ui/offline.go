package ui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// offlineState is the fallback to the state dir while the source is lost.
type offlineState struct {
	fetching bool
	tried    time.Time // when the last read started
	read     bool      // the screen shows a reading of the state dir
	err      error     // why the last read failed
}

// offlineMsg is what the state dir said while the source was lost.
type offlineMsg struct {
	jobs  []ctl.JobStatus
	locks []ctl.LockStatus
	recs  []run.Record
	at    time.Time
	err   error
}

// fetchOffline reads jobs, locks and history from the state dir.
func (m Model) fetchOffline() tea.Cmd {
	sd, parent, at := m.opts.Offline, m.ctx, m.wall()
	return func() tea.Msg {
		ctx, cancel := bounded(parent)
		defer cancel()
		jobs, err := sd.Jobs(ctx)
		if err != nil {
			return offlineMsg{at: at, err: err}
		}
		locks, err := sd.Locks(ctx)
		if err != nil {
			return offlineMsg{at: at, err: err}
		}
		recs, err := sd.History(ctx, ctl.HistoryQuery{Limit: historyPage})
		return offlineMsg{jobs: jobs, locks: locks, recs: recs, at: at, err: err}
	}
}

// goOffline freezes the screen at the moment the source was lost: no
// countdown or elapsed time moves, everything is greyed, and the state
// dir is read when there is one to read.
func (m Model) goOffline() (Model, tea.Cmd) {
	m.c.asOf, m.c.st, m.c.lost = m.wall(), m.grey, true
	m.daemon = ctl.DaemonStatus{} // a daemon that is gone is not shutting down any more
	m = m.layout().refreshViews()
	return m.offlineDue()
}

// offlineDue starts a read of the state dir if one is due.
func (m Model) offlineDue() (Model, tea.Cmd) {
	if m.opts.Offline == nil || m.offline.fetching || (!m.offline.tried.IsZero() && m.wall().Sub(m.offline.tried) < refreshEvery) {
		return m, nil
	}
	m.offline.fetching, m.offline.tried = true, m.wall()
	return m, m.fetchOffline()
}

// onOffline shows what the state dir said, as of when it was read.
func (m Model) onOffline(msg offlineMsg) (Model, tea.Cmd) {
	m.offline.fetching = false
	if !m.conn.lost {
		return m, nil // reconnected meanwhile: the daemon's snapshot is on its way
	}
	m.offline.err = msg.err
	if msg.err != nil {
		return m, nil
	}
	m.c.asOf, m.loaded, m.offline.read = msg.at, true, true
	m.c.data.setJobs(keepCounts(msg.jobs, m.c.data))
	m.c.data.setLocks(msg.locks, m.readsLocks())
	m.c.data.setRecords(msg.recs)
	return m.refreshViews(), nil
}

// goOnline undoes goOffline once the source is back.
func (m Model) goOnline() Model {
	m.c.asOf, m.c.st, m.c.lost = time.Time{}, m.live, false
	m.offline = offlineState{}
	return m.refreshViews()
}

// keepCounts gives the jobs read from the state dir the counters the
// daemon last reported: only a daemon counts, and a state dir's zero
// counters would read as "nothing ran". A job the daemon never reported
// keeps no counters (Since zero), which the screens show as unknown.
func keepCounts(jobs []ctl.JobStatus, last *store) []ctl.JobStatus {
	for i := range jobs {
		if jobs[i].Counts.Since.IsZero() {
			if j, ok := last.job(jobs[i].Name); ok {
				jobs[i].Counts = j.Counts
			}
		}
	}
	return jobs
}
