package ui

import (
	"errors"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"cronvisor/internal/base/exepages"
	"cronvisor/internal/ctl"
)

// conn is the state of the link to the source.
type conn struct {
	lost    bool
	err     error
	attempt int       // reconnect attempts since the link was lost
	retryAt time.Time // when the next attempt starts
	pending bool      // a reconnect is scheduled
}

// lose notes that the source went away and schedules a reconnect, unless
// one is scheduled already.
func (m Model) lose(err error) (Model, tea.Cmd) {
	wasLost := m.conn.lost
	m.events = nil
	m.conn.lost, m.conn.err = true, err
	var cmds []tea.Cmd
	if !wasLost {
		var cmd tea.Cmd
		m, cmd = m.goOffline()
		cmds = append(cmds, cmd)
	}
	if !m.conn.pending {
		m.conn.attempt++
		m.conn.pending = true
		m.conn.retryAt = m.wall().Add(backoff(m.conn.attempt))
		cmds = append(cmds, reconnectAfter(m.conn.attempt))
	}
	return m, tea.Batch(cmds...)
}

// gone reports whether err means the source is not there any more.
func gone(err error) bool {
	return errors.Is(err, ctl.ErrNoDaemon) || errors.Is(err, errStreamEnded)
}

func (m Model) onSubscribed(msg subscribedMsg) (Model, tea.Cmd) {
	if msg.err != nil {
		return m.lose(msg.err)
	}
	m.events = msg.ch
	cmds := []tea.Cmd{waitEvents(msg.ch)}
	if m.conn.lost {
		// Events were missed while away: re-read everything.
		m.conn = conn{}
		m = m.goOnline().layout().say("reconnected to "+m.opts.Title, false)
		m.fetching = true
		cmds = append(cmds, m.fetchSnapshot(true), m.fetchHistory(""))
		if m.inDetail {
			cmds = append(cmds, m.fetchHistory(m.detail.job))
		}
	}
	return m, tea.Batch(cmds...)
}

// onEvents applies a batch of events and re-arms the wait for the next.
func (m Model) onEvents(msg eventsMsg) (Model, tea.Cmd) {
	if msg.ch != m.events {
		return m, nil // from a subscription given up on
	}
	changed, detailDone := false, false
	for _, ev := range msg.events {
		m.c.data.apply(ev)
		if ev.Type != ctl.EventRunOutput {
			changed = true
			if ev.Job != "" {
				m.stale[ev.Job] = true
			}
			if ev.Job == m.detail.job && (ev.Type == ctl.EventRunFinished || ev.Type == ctl.EventHostLost || ev.Type == ctl.EventRunSkipped) {
				detailDone = true
			}
		}
		switch ev.Type {
		case ctl.EventConfigReloaded:
			m.needFull = true // jobs came and went
			m = m.reloaded(ev)
		case ctl.EventResync:
			m.needFull = true
		case ctl.EventShuttingDown:
			m.daemon.ShuttingDown, m.daemon.Finishing = true, ev.Jobs
			m = m.layout()
		}
	}
	var cmds []tea.Cmd
	if changed {
		m.dirty = true
		m = m.refreshViews()
	} else if m.inDetail {
		m.detail = m.detail.Refresh()
	}
	if detailDone && m.inDetail {
		cmds = append(cmds, m.fetchHistory(m.detail.job)) // for the new run's log path
	}
	if msg.closed {
		mm, cmd := m.lose(errStreamEnded)
		return mm, tea.Batch(append(cmds, cmd)...)
	}
	return m, tea.Batch(append(cmds, waitEvents(msg.ch))...)
}

// reloaded shows a reload's result: a refused file's problems stay in a
// banner until a good file loads.
func (m Model) reloaded(ev ctl.WireEvent) Model {
	m = m.setRefused(ev.Problems, ev.Time)
	if len(ev.Problems) > 0 {
		return m.say("jobs.yaml refused, old jobs kept", true)
	}
	said := "jobs.yaml reloaded: " + plural(ev.Jobs, "job")
	if ev.Reason != "" {
		said += "; " + ev.Reason
	}
	return m.say(said, false)
}

// setRefused sets the refused-reload banner's problems; none clears it.
func (m Model) setRefused(problems []string, at time.Time) Model {
	if len(problems) == 0 {
		m.refused, m.refusedAt = nil, time.Time{}
	} else {
		m.refused, m.refusedAt = problems, at
	}
	return m.layout() // the banner's height changed
}

func (m Model) onSnapshot(msg snapshotMsg) (Model, tea.Cmd) {
	m.fetching = false
	if msg.err != nil {
		if gone(msg.err) {
			return m.lose(msg.err)
		}
		return m.say("cannot read state: "+msg.err.Error(), true), nil
	}
	m.loaded, m.dirty, m.lastFetch = true, false, m.wall()
	hadNote := m.c.data.historyNote() != ""
	if d := msg.daemon; d != nil {
		m.daemon = *d
		m = m.setRefused(d.Refused, d.RefusedAt)
	}
	m.c.data.setJobs(msg.jobs)
	clear(m.stale)
	m.lastCheck, m.lastRows = m.lastFetch, m.lastFetch
	if msg.withLocks {
		m.c.data.setLocks(msg.locks, m.readsLocks())
		m.c.data.resources = msg.resources
		m.lastLocks = m.lastFetch
	}
	if hadNote != (m.c.data.historyNote() != "") {
		m = m.layout() // the history banner takes a line, or gives it back
	}
	m = m.refreshViews()
	m.lastShown = m.shownJobs()
	return m, giveBack
}

// giveBack returns the heap a whole read left behind to the system. A
// read of 10,000 jobs decodes several times what it keeps, and the
// runtime gives freed pages back only slowly: an idle console would hold
// them for minutes. Whole reads are rare (start, reconnect, reload,
// resync), and this runs beside the model, not in Update. The
// executable's pages that start-up and the read touched go back too (see
// exepages); what draws the screen faults its own back in.
func giveBack() tea.Msg {
	debug.FreeOSMemory()
	_, _ = exepages.Release() // an error costs RSS only
	return nil
}

func (m Model) onHistory(msg historyMsg) (Model, tea.Cmd) {
	if msg.err != nil {
		if gone(msg.err) {
			return m.lose(msg.err)
		}
		return m.say("cannot read history: "+msg.err.Error(), true), nil
	}
	if msg.job == "" {
		m.c.data.setRecords(msg.recs)
		m.hist = m.hist.Refresh()
		m.jobs = m.jobs.Refresh()
		m.tl = m.tl.Refresh() // the page may name another host: a row each
		return m, nil
	}
	if m.inDetail && msg.job == m.detail.job {
		m.detail = m.detail.setRecords(msg.recs)
	}
	return m, nil
}

// onTick redraws the countdowns and re-reads what is due (rows.go). At
// most one read is in flight.
func (m Model) onTick() (Model, tea.Cmd) {
	now := m.wall()
	if m.status != "" && now.Sub(m.statusAt) > statusFor {
		m.status = ""
	}
	m = m.expireStrip(now)
	if m.conn.lost {
		mm, cmd := m.offlineDue()
		return mm, tea.Batch(tick(), cmd)
	}
	if m.fetching {
		return m, tick()
	}
	m, cmd := m.readDue(now)
	m, tcmd := m.timelineDue() // lanes that came on screen since
	var logCmd tea.Cmd
	if m.inDetail {
		m.detail, logCmd = m.detail.poll(now)
	}
	m, hosts := m.hostsDue(now)
	return m, tea.Batch(tick(), cmd, tcmd, logCmd, hosts)
}

// locksDue reports whether a refresh should read locks too: when they are
// on screen, or once a refresh period.
func (m Model) locksDue(now time.Time) bool {
	return m.screens.tabs[m.tab].readsLocks || now.Sub(m.lastLocks) >= refreshEvery
}

// statusFor is how long a status message stays.
const statusFor = 6 * time.Second

// firePassed reports whether a job's next fire came due since the last
// snapshot, which moved its next fire.
func (m Model) firePassed(now time.Time) bool {
	after, upTo := sinceNanos(m.lastFetch), now.UnixNano()
	for _, j := range m.c.data.jobs {
		if j.nextRun != 0 && j.nextRun > after && j.nextRun <= upTo {
			return true
		}
	}
	return false
}

func (m Model) onAction(msg actionMsg) (Model, tea.Cmd) {
	if msg.err != nil {
		if gone(msg.err) {
			return m.lose(msg.err)
		}
		if lines := strings.Split(msg.err.Error(), "\n"); msg.verb == "reload" && len(lines) > 1 {
			// The problems come one a line after the first; the banner lists them.
			return m.setRefused(lines[1:], m.wall()).say("jobs.yaml refused, old jobs kept", true), nil
		}
		return m.say(msg.err.Error(), true), nil
	}
	if msg.hold != nil && m.ask == nil {
		// The daemon saw a pause (or enabled: false) this console had
		// not yet: ask now, as the key would have.
		m = m.askForce(msg.job, *msg.hold)
		m.stale[msg.job] = true
		return m, nil
	}
	m = m.say(msg.done, msg.warn)
	m.dirty = true
	if msg.job != "" {
		m.stale[msg.job] = true
	} else {
		m.needFull = true
	}
	if m.fetching {
		return m, nil
	}
	return m.readDue(m.wall())
}

func itoa(i int) string { return strconv.Itoa(i) }
