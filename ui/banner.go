package ui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// banners are the lines between the header and the body, each a state
// that holds until it ends: the source is lost, the daemon is shutting
// down, the history is degraded, a reload was refused.
func (m Model) banners() []string {
	var out []string
	if m.conn.lost {
		out = append(out, m.lostBanner()...)
	} else if m.daemon.ShuttingDown {
		n := m.c.data.running()
		out = append(out, m.c.st.confirm.Render(fit(" ⏻ daemon shutting down: "+plural(n, "run")+" finishing; no new fires", m.width)))
	}
	if note := m.c.data.historyNote(); note != "" {
		out = append(out, m.c.st.banner.Render(fit(" ⚠ "+localTimes(m.wall(), note), m.width)))
	}
	return append(out, m.refusedBanner()...)
}

// lostBanner says the source is gone, and what the screen shows instead:
// the state dir as of a moment, or the last snapshot, frozen.
func (m Model) lostBanner() []string {
	what := "daemon unreachable at " + m.opts.Title
	if m.opts.Embedded {
		what = "scheduler event stream lost"
	}
	first := m.c.st.banner.Render(fit(" ⚠ "+what+" — reconnecting…", m.width))
	asOf := clock(m.wall(), m.c.asOf)
	second := "   nothing below is live: as it was at " + asOf
	switch {
	case m.opts.Offline != nil && m.offline.err != nil:
		second = "   state dir unreadable (" + m.offline.err.Error() + "); as it was at " + asOf
	case m.offline.read:
		second = "   not live: locks and history read from the state dir at " + asOf
	}
	return []string{first, m.c.st.muted.Render(fit(second, m.width))}
}

// refusedBanner lists every problem of a refused reload, wrapped rather
// than cut, until a good file loads. It takes at most a third of the
// screen; what does not fit is counted.
func (m Model) refusedBanner() []string {
	if len(m.refused) == 0 {
		return nil
	}
	st := m.c.st
	head := " ✗ jobs.yaml refused at " + clock(m.wall(), m.refusedAt) + "; the old jobs run on. Fix it, then R reloads:"
	lines := strings.Split(ansi.Wrap(head, max(m.width, 1), ""), "\n")
	for _, p := range m.refused {
		wrapped := ansi.Wrap(p, max(m.width-3, 1), "")
		for _, l := range strings.Split(wrapped, "\n") {
			lines = append(lines, "   "+l)
		}
	}
	room := max(3, (m.height-2)/3)
	if len(lines) > room {
		more := len(lines) - room + 1
		lines = append(lines[:room-1], "   … "+plural(more, "more line")+"; `cronvisor validate` lists every problem")
	}
	for i, l := range lines {
		lines[i] = st.errText.Render(fit(l, m.width))
	}
	return lines
}
