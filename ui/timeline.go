package ui

import (
	"slices"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// tlWindow is one of the spans of time the timeline shows before now.
type tlWindow struct {
	name string
	d    time.Duration
}

// tlWindows are the windows keys 0 to 5 pick, as k9s's log ranges go:
// the smallest first.
var tlWindows = [...]tlWindow{
	{"5 min", 5 * time.Minute}, {"15 min", 15 * time.Minute}, {"30 min", 30 * time.Minute},
	{"1 h", time.Hour}, {"6 h", 6 * time.Hour}, {"24 h", 24 * time.Hour},
}

// tlFuture is the share, in percent, of the time axis after the
// now-line, where the next fires show.
const tlFuture = 20

// timelineKeys are the timeline's bindings: up and down pick a job (the
// list's keys), left and right a run of it.
type timelineKeys struct {
	listKeys
	Left, Right, Runs, Window, Open, Filter key.Binding
}

func newTimelineKeys() timelineKeys {
	return timelineKeys{
		listKeys: newListKeys(),
		Left:     key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "older run")),
		Right:    key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "newer run")),
		Runs:     key.NewBinding(key.WithKeys("left", "right"), key.WithHelp("←→", "runs")),
		Window:   key.NewBinding(key.WithKeys("0", "1", "2", "3", "4", "5"), key.WithHelp("0-5", "window 5m…24h")),
		Open:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open run")),
		Filter:   newFilterKeys().Filter,
	}
}

// ShortHelp implements help.KeyMap.
func (k timelineKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Move, k.Runs, k.Window, k.Open, k.Filter}
}

// FullHelp implements help.KeyMap.
func (k timelineKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.column(), {k.Left, k.Right, k.Window, k.Open, k.Filter}}
}

// lane is one row of the timeline: a job, or a job on one host when the
// history is shared by several.
type lane struct {
	job  int32  // the job's position in the store's rows
	host string // "" unless the history names several hosts
}

// timelineView draws each job's runs across time: bars from start to end
// in their outcome's colour, marks for fires that did not run, the
// running run growing to the now-line, the next fires after it. It reads
// the store (its jobs, and the history index that events and reads
// feed), never the source; it draws only the rows on screen. Its rows are
// positions in lanes; the cursor is a lane and a run of it.
type timelineView struct {
	list
	keys  timelineKeys
	win   int // index into tlWindows
	lanes []lane
	// at is the selected run's time (Unix ns; 0: the newest), id its
	// identity (tlItem.id; "": the run nearest at, after a move to
	// another lane), lane the selected lane's key.
	at       int64
	id, lane string
}

func newTimelineView(c *common) timelineView {
	return timelineView{list: newList(c, 3, nil), keys: newTimelineKeys()}
}

// openRunMsg opens a job's detail on one of its past runs.
type openRunMsg struct {
	job string
	rec run.Record
}

// timelineNeedMsg asks the root to read what the rows on screen lack of
// the window's history.
type timelineNeedMsg struct{}

// SetSize sets the area the view draws in.
func (v timelineView) SetSize(w, h int) timelineView {
	v.list = v.setSize(w, h)
	return v
}

// KeyMap is the view's keys.
func (v timelineView) KeyMap() help.KeyMap { return v.keys }

// window is the span of time before now on screen.
func (v timelineView) window() tlWindow { return tlWindows[v.win] }

// Update handles keys and mouse.
func (v timelineView) Update(msg tea.Msg) (timelineView, tea.Cmd) {
	l, cmd, done := v.list.update(v.keys.listKeys, msg)
	v.list = l
	switch done {
	case refilter:
		return v.Refresh(), tea.Batch(cmd, send(timelineNeedMsg{}))
	case handled:
		v.id, v.lane = "", v.laneKey()
		return v, tea.Batch(cmd, send(timelineNeedMsg{}))
	}
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return v, nil
	}
	switch {
	case key.Matches(km, v.keys.Window):
		v.win = int(km.Runes[0] - '0')
		return v, send(timelineNeedMsg{})
	case key.Matches(km, v.keys.Left):
		return v.step(-1), nil
	case key.Matches(km, v.keys.Right):
		return v.step(1), nil
	case key.Matches(km, v.keys.Open):
		return v, v.open()
	}
	return v, nil
}

// Refresh rebuilds the lanes from the store: one per job in the order of
// their names, one per job and host when the history names several
// hosts. The cursor stays on its lane.
func (v timelineView) Refresh() timelineView {
	d := v.c.data
	x := d.tl
	lanes := v.lanes[:0:0]
	for _, i := range d.byName {
		name := d.jobs[i].name
		if !x.many || len(x.hosts[name]) == 0 {
			if v.filter.match(name) {
				lanes = append(lanes, lane{job: i})
			}
			continue
		}
		hosts := slices.Sorted(slices.Values(x.hosts[name]))
		for _, h := range hosts {
			if v.filter.match(name, h) {
				lanes = append(lanes, lane{job: i, host: h})
			}
		}
	}
	v.lanes = lanes
	rows := make([]int, len(lanes))
	for i := range rows {
		rows[i] = i
	}
	v.list = v.setRows(rows)
	for i := range lanes {
		if v.keyOf(i) == v.lane {
			v.cur.pos = i
		}
	}
	v.cur.fit(len(v.rows), v.listHeight())
	v.lane = v.laneKey()
	return v
}

// keyOf names lane i across refreshes: its job and host.
func (v timelineView) keyOf(i int) string {
	l := v.lanes[i]
	return v.c.data.jobs[l.job].name + "\x00" + l.host
}

// laneKey names the selected lane, "" when there is none.
func (v timelineView) laneKey() string {
	if len(v.lanes) == 0 {
		return ""
	}
	return v.keyOf(v.cur.pos)
}

// shownJobs names the jobs of the lanes on screen, once each.
func (v timelineView) shownJobs() []string {
	from, to := v.shown()
	names := make([]string, 0, to-from)
	for _, l := range v.lanes[from:to] {
		n := v.c.data.jobs[l.job].name
		if len(names) == 0 || names[len(names)-1] != n {
			names = append(names, n)
		}
	}
	return names
}

// tlItem is something the cursor can stand on: a finished record, or the
// running run.
type tlItem struct {
	at      int64 // its place in time: the slot, else the start
	sp      span
	runID   string // the running run's
	running bool
}

// id is the item's identity: recKey's, or "▶" and the running run's id.
// It is made only for the cursor's lane, not for every item drawn.
func (it tlItem) id() string {
	if it.running {
		return "▶" + it.runID
	}
	return it.sp.runID + "#" + itoa(int(max(it.sp.attempt, 1))) + "#" + string(it.sp.outcome)
}

// running is the lane's run in flight, if the job's status has one.
func (v timelineView) running(l lane) (ctl.JobStatus, bool) {
	r := v.c.data.jobs[l.job]
	if r.state != ctl.StateRunning || r.more == nil || r.more.StartedAt.IsZero() {
		return ctl.JobStatus{}, false
	}
	j := r.status()
	if l.host != "" {
		h := v.c.data.host
		if j.Holder != nil && j.Holder.Host != "" {
			h = j.Holder.Host
		}
		if h != l.host {
			return ctl.JobStatus{}, false
		}
	}
	return j, true
}

// items are the lane's runs and marks between from and to, in time order.
func (v timelineView) items(l lane, from, to int64) []tlItem {
	name := v.c.data.jobs[l.job].name
	spans := v.c.data.tl.inWindow(name, from, to)
	out := make([]tlItem, 0, len(spans)+1)
	for _, s := range spans {
		if l.host != "" && s.host != l.host {
			continue
		}
		out = append(out, tlItem{at: s.key(), sp: s})
	}
	if j, ok := v.running(l); ok {
		out = append(out, tlItem{at: j.StartedAt.UnixNano(), runID: j.RunID, running: true})
	}
	return out
}

// pick is the selected item's position in items, -1 for none: the one
// the cursor names, else the nearest to its time, else the newest.
func (v timelineView) pick(items []tlItem) int {
	if len(items) == 0 {
		return -1
	}
	if v.at == 0 {
		return len(items) - 1
	}
	best := 0
	for i, it := range items {
		if v.id != "" && it.id() == v.id {
			return i
		}
		if abs64(it.at-v.at) < abs64(items[best].at-v.at) {
			best = i
		}
	}
	return best
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// span is the window on screen at now: from its first column's time to
// its last's.
func (v timelineView) span(now time.Time) (from, to int64) {
	g := v.geom(now)
	return g.from, g.from + int64(g.tw)*g.cell
}

// step moves the cursor to the run before (-1) or after (1) the selected
// one in its lane.
func (v timelineView) step(d int) timelineView {
	if len(v.lanes) == 0 {
		return v
	}
	from, to := v.span(v.c.now())
	items := v.items(v.lanes[v.cur.pos], from, to)
	i := v.pick(items)
	if i < 0 {
		return v
	}
	it := items[clamp(i+d, len(items))]
	v.at, v.id = it.at, it.id()
	return v
}

// open opens the selected run in the job's detail: a past one selected
// there, the running one with its live output.
func (v timelineView) open() tea.Cmd {
	if len(v.lanes) == 0 {
		return nil
	}
	l := v.lanes[v.cur.pos]
	name := v.c.data.jobs[l.job].name
	from, to := v.span(v.c.now())
	items := v.items(l, from, to)
	i := v.pick(items)
	if i < 0 || items[i].running {
		return send(openJobMsg{job: name})
	}
	return send(openRunMsg{job: name, rec: items[i].sp.record(name)})
}
