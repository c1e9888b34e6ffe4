package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"cronvisor/internal/ctl"
)

// locksKeys are the locks table's bindings.
type locksKeys struct {
	listKeys
	Filter key.Binding
}

// ShortHelp implements help.KeyMap.
func (k locksKeys) ShortHelp() []key.Binding { return []key.Binding{k.Move, k.Filter} }

// FullHelp implements help.KeyMap.
func (k locksKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.column(), {k.Filter}} }

// locksView is every lock, held or free, with its holder.
type locksView struct {
	list
	keys  locksKeys
	nameW int
}

// locksChrome is the table's chrome: its header, and two lines on the
// selected lock under a blank one; the resources' lines add to it.
const locksChrome = 4

func newLocksView(c *common) locksView {
	return locksView{list: newList(c, locksChrome, func(r int) string { return c.data.locks[r].Lock }),
		keys: locksKeys{listKeys: newListKeys(), Filter: newFilterKeys().Filter}}
}

// SetSize sets the area the view draws in.
func (v locksView) SetSize(w, h int) locksView {
	v.list = v.list.setSize(w, h)
	return v.makeRoom()
}

// makeRoom keeps the resources' lines under the table, up to half of
// the rows' height, however many locks there are: the table's rows
// scroll in what is left.
func (v locksView) makeRoom() locksView {
	v.list.chrome = locksChrome + v.resourceRoom()
	v.list.cur.fit(len(v.rows), v.listHeight())
	return v
}

// resourceRoom is how many lines the resources take.
func (v locksView) resourceRoom() int {
	n := len(v.resourceLines())
	if n == 0 {
		return 0
	}
	return min(n, max((v.height-locksChrome)/2, 0))
}

// KeyMap is the table's keys.
func (v locksView) KeyMap() help.KeyMap { return v.keys }

// Update handles keys and mouse.
func (v locksView) Update(msg tea.Msg) (locksView, tea.Cmd) {
	l, cmd, done := v.list.update(v.keys.listKeys, msg)
	v.list = l
	if done == refilter {
		return v.Refresh(), cmd
	}
	return v, cmd
}

// Refresh rebuilds the rows from the store.
func (v locksView) Refresh() locksView {
	if !v.c.data.allLocks {
		// Only the held locks are kept while the tab is not shown; the
		// read that showing it starts brings them all, and the selection
		// waits for it.
		sel := v.selected
		v.list = v.setRows(nil)
		v.selected = sel
		return v
	}
	rows := make([]int, 0, len(v.c.data.locks))
	v.nameW = len("LOCK")
	for i, l := range v.c.data.locks {
		v.nameW = max(v.nameW, len(l.Lock))
		if v.filter.match(l.Lock, l.Job, l.Host, l.Cmdline, strconv.Itoa(l.PID), heldWord(l)) {
			rows = append(rows, i)
		}
	}
	v.list = v.setRows(rows)
	return v.makeRoom()
}

func heldWord(l ctl.LockStatus) string {
	if l.Held {
		return "held"
	}
	return "free"
}

func (v locksView) columns() []column {
	return []column{
		{title: "LOCK", min: 8, want: min(v.nameW, 16), max: v.nameW, grow: 2},
		{title: "STATE", min: 6, want: 6, max: 6},
		{title: "HOLDER", min: 10, want: 16, max: 24, grow: 3},
		{title: "SINCE", min: 5, want: 6, max: 7, grow: 4},
		{title: "JOB / COMMAND", min: 12, want: 24, max: 80, grow: 1},
		{title: "RUN ID", min: 8, want: 16, max: 28, drop: 1, grow: 5},
	}
}

// View draws the table and the selected lock's full holder.
func (v locksView) View() string {
	cols := v.columns()
	widths := layout(cols, v.width-2)
	lines := append(v.head(), headerRow(v.c.st, cols, widths, v.width))
	switch {
	case !v.c.data.allLocks:
		lines = append(lines, v.c.st.muted.Render("  reading locks…"))
	case len(v.rows) == 0:
		lines = append(lines, v.c.st.muted.Render("  no locks"))
	}
	from, to := v.shown()
	for i := from; i < to; i++ {
		lines = append(lines, row(v.c.st, v.cells(v.c.data.locks[v.rows[i]]), widths, i == v.cur.pos, v.width))
	}
	room := v.resourceRoom()
	res := v.resourceLines()[:room]
	return pad(lines, v.height-3-room) + strings.Join(res, "") + "\n\n" + v.about()
}

// resourceLines are the declared resources under the locks, a line each
// (each starting with its newline): the slots held of the size, their
// holders, and the fires waiting for one.
func (v locksView) resourceLines() []string {
	rs := v.c.data.resources
	if len(rs) == 0 {
		return nil
	}
	st, now := v.c.st, v.c.now()
	out := []string{"\n", "\n" + st.section.Render(" RESOURCES")}
	for _, r := range rs {
		line := fmt.Sprintf(" %s  %d/%d held", r.Resource, r.Held, r.Size)
		var who []string
		for _, sl := range r.Slots {
			switch {
			case sl.Held && sl.Foreign:
				who = append(who, fmt.Sprintf("%s/%d outside cronvisor: pid %s %s", r.Resource, sl.Slot, pidHost(sl.PID, sl.Host), sl.Cmdline))
			case sl.Held:
				who = append(who, fmt.Sprintf("%s/%d %s on %s since %s", r.Resource, sl.Slot, sl.Job, sl.Host, clock(now, sl.Since)))
			}
		}
		if len(who) > 0 {
			line += ": " + strings.Join(who, ", ")
		}
		out = append(out, "\n"+fit(line, v.width))
		if len(r.Waiters) > 0 {
			var ws []string
			for _, w := range r.Waiters {
				ws = append(ws, w.Job+" on "+w.Host+" (gives up "+inTime(now, w.Until)+")")
			}
			out = append(out, "\n"+fit(st.warn.Render("   waiting: "+strings.Join(ws, ", ")), v.width))
		}
	}
	return out
}

func (v locksView) cells(l ctl.LockStatus) []cell {
	now := v.c.now()
	if !l.Held {
		last := ""
		if l.Job != "" {
			last = "last: " + l.Job
		}
		return []cell{{text: l.Lock}, {text: "○ free", id: mutedID}, {text: "—", id: mutedID},
			{}, {text: last, id: mutedID}, {}}
	}
	who := cell{text: l.Job, id: runPlainID}
	if l.Foreign {
		who = cell{text: "foreign: " + l.Cmdline, id: foreignID}
	}
	return []cell{
		{text: l.Lock},
		{text: "● held", id: warnID},
		{text: pidHost(l.PID, l.Host)},
		{text: dur(now.Sub(l.Since)), id: mutedID},
		who,
		{text: l.RunID, id: mutedID},
	}
}

// about is two lines on the selected lock: every holder field, including
// the whole command line of a foreign holder.
func (v locksView) about() string {
	if len(v.rows) == 0 {
		return ""
	}
	st, now := v.c.st, v.c.now()
	l := v.c.data.locks[v.rows[v.cur.pos]]
	head := " " + st.section.Render(l.Lock) + "  "
	switch {
	case !l.Held:
		head += st.muted.Render("free")
		if l.Job != "" {
			head += st.muted.Render(" · last held by " + l.Job + " run " + l.RunID + " (pid " + pidHost(l.PID, l.Host) + ")")
		}
		return fit(head, v.width) + "\n"
	case l.Foreign:
		head += st.foreign.Render("held outside cronvisor by pid " + pidHost(l.PID, l.Host))
		if !l.Since.IsZero() {
			head += st.muted.Render(" since " + clock(now, l.Since) + " (" + dur(now.Sub(l.Since)) + ")")
		}
		return fit(head, v.width) + "\n" + fit(st.muted.Render(" command: ")+l.Cmdline, v.width)
	}
	head += "held by pid " + pidHost(l.PID, l.Host) + " since " + clock(now, l.Since) + " (" + dur(now.Sub(l.Since)) + ")"
	var more []string
	more = append(more, "job "+l.Job, "run "+l.RunID)
	if !l.Slot.IsZero() {
		more = append(more, "slot "+clock(now, l.Slot))
	}
	if l.SupervisorPID != 0 {
		more = append(more, "supervisor pid "+strconv.Itoa(l.SupervisorPID))
	}
	return fit(head, v.width) + "\n" + fit(st.muted.Render(" "+strings.Join(more, " · ")), v.width)
}
