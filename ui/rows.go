package ui

import (
	"errors"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"cronvisor/internal/ctl"
)

// The console reads the whole table once (at start, after a reconnect, a
// reload or a resync), then keeps it from the event stream. What an event
// cannot say is re-read by name, never the whole table:
//
//   - the jobs an event named (their counters, next fire, holder),
//   - the jobs whose next fire passed (the daemon moved it),
//   - the rows on screen, when they change and every refreshEvery: a lock
//     taken by another process (flock from a shell, another host) is no
//     event of this daemon, so a holder on screen is at most refreshEvery
//     old, and a row scrolled into view is read at the next tick;
//   - the locks, every refreshEvery while the locks tab shows them.
//
// A row off screen may show an outside holder late; it is read when it
// comes on screen.

// rowChunk is the most names one read asks for: a burst's thousand fires
// become a few requests of bounded size.
const rowChunk = 200

// rowsMsg is a read of some jobs by name, and of the locks with withLocks.
type rowsMsg struct {
	jobs      []ctl.JobStatus
	locks     []ctl.LockStatus
	resources []ctl.ResourceStatus
	withLocks bool
	err       error
}

// fetchRows reads the named jobs and, with withLocks, the locks.
func (m Model) fetchRows(names []string, withLocks bool) tea.Cmd {
	src, parent := m.src, m.ctx
	return func() tea.Msg {
		ctx, cancel := bounded(parent)
		defer cancel()
		var msg rowsMsg
		for c := range slices.Chunk(names, rowChunk) {
			jobs, err := src.JobsNamed(ctx, c)
			if err != nil {
				return rowsMsg{err: err}
			}
			msg.jobs = append(msg.jobs, jobs...)
		}
		if withLocks {
			msg.locks, msg.err = src.Locks(ctx)
			msg.resources = readResources(ctx, src, msg.err)
			msg.withLocks = true
		}
		return msg
	}
}

// readsLocks reports whether the screen shown is the locks'.
func (m Model) readsLocks() bool {
	return !m.inDetail && m.screens.tabs[m.tab].readsLocks
}

// shownJobs names the jobs on screen: the jobs table's rows, or the open
// job.
func (m Model) shownJobs() []string {
	if m.inDetail {
		return []string{m.detail.job}
	}
	if m.tab == tabTimeline {
		return m.tl.shownJobs()
	}
	if m.tab != tabJobs {
		return nil
	}
	from, to := m.jobs.shown()
	names := make([]string, 0, to-from)
	for _, r := range m.jobs.rows[from:to] {
		names = append(names, m.c.data.jobs[r].name)
	}
	return names
}

// rowsDue is what a tick re-reads: the jobs events named, those whose
// next fire passed since the last tick, and the rows on screen when they
// changed or a refresh period passed; and the locks when shown and due.
func (m Model) rowsDue(now time.Time) (Model, []string, bool) {
	due := m.stale
	m.stale = map[string]bool{}
	for _, n := range m.c.data.passed(m.lastCheck, now) {
		due[n] = true
	}
	m.lastCheck = now
	shown := m.shownJobs()
	if !slices.Equal(shown, m.lastShown) || now.Sub(m.lastRows) >= refreshEvery {
		for _, n := range shown {
			due[n] = true
		}
		m.lastShown, m.lastRows = shown, now
	}
	withLocks := m.readsLocks() && now.Sub(m.lastLocks) >= refreshEvery
	names := make([]string, 0, len(due))
	for n := range due {
		names = append(names, n)
	}
	slices.Sort(names)
	return m, names, withLocks
}

// readDue starts the reads rowsDue names, if any; the whole table instead
// when it is due (or the daemon cannot read by name).
func (m Model) readDue(now time.Time) (Model, tea.Cmd) {
	if m.fullReads { // a daemon without reads by name: the whole table, as it always was
		if !(m.dirty || now.Sub(m.lastFetch) >= refreshEvery || m.firePassed(now)) {
			return m, nil
		}
		m.fetching = true
		return m, m.fetchSnapshot(m.locksDue(now))
	}
	if m.needFull {
		m.fetching, m.needFull = true, false
		return m, m.fetchSnapshot(true)
	}
	m, names, withLocks := m.rowsDue(now)
	if len(names) == 0 && !withLocks {
		return m, nil
	}
	m.fetching = true
	return m, m.fetchRows(names, withLocks)
}

// onRows folds a read of some jobs into the table.
func (m Model) onRows(msg rowsMsg) (Model, tea.Cmd) {
	m.fetching = false
	if errors.Is(msg.err, ctl.ErrUnsupported) {
		m.fullReads, m.dirty = true, true
		return m.say("this daemon predates reads by row: the console reads the whole table", true), nil
	}
	if msg.err != nil {
		if gone(msg.err) {
			return m.lose(msg.err)
		}
		return m.say("cannot read state: "+msg.err.Error(), true), nil
	}
	m.dirty = len(m.stale) > 0
	hadNote := m.c.data.historyNote() != ""
	changed := m.c.data.updateJobs(msg.jobs)
	if msg.withLocks {
		m.c.data.setLocks(msg.locks, m.readsLocks())
		m.c.data.resources = msg.resources
		m.lastLocks = m.wall()
		changed = true
	}
	if !changed {
		return m, nil
	}
	if hadNote != (m.c.data.historyNote() != "") {
		m = m.layout()
	}
	return m.refreshViews(), nil
}

// paused folds a job_paused or job_resumed event into the store; the
// read of the job it triggers brings who paused it.
func (s *store) paused(ev ctl.WireEvent) {
	s.edit(ev.Job, func(j *ctl.JobStatus) {
		j.Paused = ev.Type == ctl.EventJobPaused
		switch {
		case j.Paused && j.State == ctl.StateIdle:
			j.State = ctl.StatePaused
		case !j.Paused && j.State == ctl.StatePaused:
			j.State, j.PausedBy = ctl.StateIdle, nil
		}
	})
}

// updateJobs replaces the jobs read by name; one the store does not know
// (added by a reload whose event is on its way) waits for the whole
// table's read that the event brings. It reports whether any row changed:
// the rows on screen are read every refreshEvery, and an unchanged read
// need not re-sort the table.
func (s *store) updateJobs(jobs []ctl.JobStatus) bool {
	changed := false
	for _, j := range jobs {
		if i, ok := s.find(j.Name); ok {
			if r := s.strs.compact(j, s.jobs[i].name); !r.same(s.jobs[i]) {
				s.movedFire(i, s.jobs[i], r)
				s.jobs[i], changed = r, true
			}
		}
	}
	if len(jobs) > 0 && s.note != jobs[0].History {
		s.note, changed = jobs[0].History, true
	}
	if changed {
		s.gen++
	}
	return changed
}
