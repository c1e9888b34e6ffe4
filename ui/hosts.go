package ui

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"

	"cronvisor/internal/ctl"
)

// hostsEvery is how often the Hosts tab re-reads the fleet while shown:
// hosts beat every second, and one is called lost after three silent
// seconds.
const hostsEvery = 2 * time.Second

// maxOffset is the clock offset the view flags, as `status --fleet` and
// the daemon's log do.
const maxOffset = time.Second

// hostsMsg is a read of the fleet's hosts.
type hostsMsg struct {
	hosts ctl.Hosts
	err   error
}

// fetchHosts reads the fleet's hosts. A daemon that predates the route
// has no Hosts tab, as one whose history is its own.
func (m Model) fetchHosts() tea.Cmd {
	src, parent := m.src, m.ctx
	return func() tea.Msg {
		ctx, cancel := bounded(parent)
		defer cancel()
		h, err := src.Hosts(ctx)
		return hostsMsg{hosts: h, err: err}
	}
}

// onHosts keeps a read of the hosts. An older daemon has none to give,
// as one whose history is its own. A tab that is no more (the daemon
// restarted without a shared history) gives way to the Jobs tab.
func (m Model) onHosts(msg hostsMsg) (Model, tea.Cmd) {
	m.hosts.reading, m.hosts.askedAt = false, m.wall() // the next read a period after this answer
	switch {
	case errors.Is(msg.err, ctl.ErrUnsupported):
		m.hosts = m.hosts.set(ctl.Hosts{}, m.wall())
	case msg.err != nil: // a lost daemon's banner says more
		m.hosts.err = msg.err.Error()
		return m, nil
	default:
		m.hosts = m.hosts.set(msg.hosts, m.wall())
	}
	if m.tab == tabHosts && m.tabHidden(tabHosts) {
		return m.showTab(tabJobs)
	}
	return m, nil
}

// hostsDue is the read of the hosts a tick starts: while the tab is
// shown every hostsEvery, else once a refresh period, which is how a
// console learns that the daemon's history became shared.
func (m Model) hostsDue(now time.Time) (Model, tea.Cmd) {
	every := refreshEvery
	if m.tab == tabHosts && !m.inDetail {
		every = hostsEvery
	}
	if m.hosts.reading || now.Sub(m.hosts.askedAt) < every {
		return m, nil
	}
	m.hosts.reading, m.hosts.askedAt = true, now
	return m, m.fetchHosts()
}

// hostsView is the fleet's hosts as the shared history's server knows
// them, what `status --fleet` prints: each host's state, version, last
// beat, clock offset and running runs; the selected host's runs under
// the table.
type hostsView struct {
	list
	keys    locksKeys // a list's and its filter, as the locks'
	data    ctl.Hosts
	readAt  time.Time // when data was read, by the wall clock: beats age from it
	askedAt time.Time // when the last read was asked for
	reading bool
	err     string // the last read's error, "" after a good one
	nameW   int
}

func newHostsView(c *common) hostsView {
	v := hostsView{keys: locksKeys{listKeys: newListKeys(), Filter: newFilterKeys().Filter}}
	// The table's chrome: its header, and the selected host's runs under
	// a blank line (up to a third of the view).
	v.list = newList(c, 4, nil)
	return v
}

// set takes a read of the hosts; the selection stays on its host.
func (v hostsView) set(h ctl.Hosts, at time.Time) hostsView {
	v.data, v.readAt, v.reading, v.err = h, at, false, ""
	hosts := h.Hosts
	v.key = func(r int) string { return hosts[r].Host }
	return v.Refresh()
}

// SetSize sets the area the view draws in.
func (v hostsView) SetSize(w, h int) hostsView {
	v.width, v.height = w, h
	v.chrome = 2 + v.runsHeight()
	v.cur.fit(len(v.rows), v.listHeight())
	return v
}

// runsHeight is the lines of the selected host's runs: up to a third of
// the view, at least its title and one run.
func (v hostsView) runsHeight() int { return max(2, v.height/3) }

// KeyMap is the tab's keys.
func (v hostsView) KeyMap() help.KeyMap { return v.keys }

// Update handles keys and mouse.
func (v hostsView) Update(msg tea.Msg) (hostsView, tea.Cmd) {
	l, cmd, done := v.list.update(v.keys.listKeys, msg)
	v.list = l
	if done == refilter {
		return v.Refresh(), cmd
	}
	return v, cmd
}

// Refresh picks the rows that match the filter.
func (v hostsView) Refresh() hostsView {
	rows := make([]int, 0, len(v.data.Hosts))
	v.nameW = len("HOST")
	for i, h := range v.data.Hosts {
		v.nameW = max(v.nameW, len(shortHost(h.Host))+len(" (this)"))
		if v.filter.match(h.Host, h.State, h.Version, runningJobs(h.Running)) {
			rows = append(rows, i)
		}
	}
	v.list = v.setRows(rows)
	return v.SetSize(v.width, v.height)
}

func (v hostsView) columns() []column {
	now := v.c.now()
	var starts []time.Time
	for _, h := range v.data.Hosts {
		starts = append(starts, h.StartedAt)
	}
	startW := clockWidth(now, starts...)
	return []column{
		{title: "HOST", min: 8, want: min(v.nameW, 20), max: v.nameW, grow: 2},
		{title: "STATE", min: 9, want: 9, max: 9},
		{title: "VERSION", min: 7, want: 10, max: 16, drop: 1, grow: 5},
		{title: "PID", min: 5, want: 7, max: 7, drop: 3, grow: 7},
		{title: "STARTED", min: 8, want: startW, max: startW, drop: 2, grow: 6},
		{title: "LAST BEAT", min: 9, want: 9, max: 10, grow: 3},
		{title: "CLOCK", min: 7, want: 8, max: 16, grow: 4},
		{title: "RUNNING", min: 8, want: 16, max: 120, grow: 1},
	}
}

// View draws the table and the selected host's runs.
func (v hostsView) View() string {
	st := v.c.st
	cols := v.columns()
	widths := layout(cols, v.width-2)
	lines := append(v.head(), headerRow(st, cols, widths, v.width))
	switch {
	case v.err != "":
		lines = append(lines, st.errText.Render(fit("  cannot read the hosts: "+v.err, v.width)))
	case len(v.rows) == 0:
		lines = append(lines, st.muted.Render("  no hosts in the shared history"))
	}
	from, to := v.shown()
	for i := from; i < to; i++ {
		lines = append(lines, row(st, v.cells(v.data.Hosts[v.rows[i]]), widths, i == v.cur.pos, v.width))
	}
	return pad(lines, v.height-v.runsHeight()) + "\n" + pad(v.runs(), v.runsHeight())
}

// cells are one host's row.
func (v hostsView) cells(h ctl.HostStatus) []cell {
	now := v.c.now()
	name := cell{text: shortHost(h.Host)} // as the history's HOST column; the runs' title has it whole
	if h.Host == v.data.Self {
		name.text += " (this)"
	}
	state := cell{text: "● up", id: okID}
	switch h.State {
	case "stopped":
		state = cell{text: "○ stopped", id: mutedID}
	case "lost":
		state = cell{text: "✗ lost", id: failID}
	}
	pid, beat, offset := cell{text: "—", id: mutedID}, cell{text: "never", id: mutedID}, cell{text: "—", id: mutedID}
	if h.PID != 0 {
		pid = cell{text: strconv.Itoa(h.PID), id: mutedID}
	}
	if !h.LastBeat.IsZero() {
		beat = cell{text: dur(v.silent(h, now)) + " ago", id: mutedID}
		offset = offsetCell(time.Duration(h.ClockOffsetMS) * time.Millisecond)
	}
	version := cell{text: h.Version}
	if version.text == "" {
		version = cell{text: "—", id: mutedID}
	}
	running := cell{text: runningJobs(h.Running), id: runPlainID}
	if len(h.Running) == 0 {
		running.id = mutedID
	}
	return []cell{name, state, version, pid, {text: clock(now, h.StartedAt), id: mutedID}, beat, offset, running}
}

// silent is how long the host has been silent: its age at the read, by
// the server's clock, and the time since the read.
func (v hostsView) silent(h ctl.HostStatus, now time.Time) time.Duration {
	return time.Duration(h.SilentMS)*time.Millisecond + max(now.Sub(v.readAt), 0)
}

// offsetCell is a host's clock minus the server's, signed, and flagged
// past maxOffset.
func offsetCell(d time.Duration) cell {
	s := d.String()
	if d >= 0 {
		s = "+" + s
	}
	if d.Abs() > maxOffset {
		return cell{text: s + " !", id: warnID}
	}
	return cell{text: s, id: mutedID}
}

// runningJobs names the running runs' jobs, "—" for none.
func runningJobs(rs []ctl.HostRun) string {
	if len(rs) == 0 {
		return "—"
	}
	jobs := make([]string, len(rs))
	for i, r := range rs {
		jobs[i] = r.Job
	}
	return strings.Join(jobs, ", ")
}

// runs lists the selected host's running runs: job, run id, start and
// how long it has run.
func (v hostsView) runs() []string {
	st, now := v.c.st, v.c.now()
	r, ok := v.row()
	if !ok {
		return nil
	}
	h := v.data.Hosts[r]
	lines := []string{rule(st, "runs on "+h.Host, st.muted.Render(plural(len(h.Running), "run")), v.width)}
	if len(h.Running) == 0 {
		return append(lines, st.muted.Render("  none running"))
	}
	cols := []column{{min: 8, want: 20, max: 40, grow: 1}, {min: 8, want: 24, max: 40, drop: 1, grow: 2},
		{min: 8, want: 8, max: 19, grow: 3}, {min: 6, want: 8, max: 10, grow: 4}}
	widths := layout(cols, v.width-2)
	for _, x := range h.Running {
		lines = append(lines, row(st, []cell{{text: x.Job, id: runPlainID}, {text: x.RunID, id: mutedID},
			{text: clock(now, x.StartedAt), id: mutedID}, {text: "for " + dur(now.Sub(x.StartedAt)), id: mutedID}}, widths, false, v.width))
	}
	return lines
}
