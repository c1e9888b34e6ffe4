package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/x/ansi"
)

// View draws the whole screen: the header, the banner when the source is
// lost, the focused view, the status line and the help. It is exactly the
// window's height, so nothing scrolls and nothing flickers.
func (m Model) View() string {
	if m.width == 0 || m.height == 0 {
		return ""
	}
	parts := append([]string{m.header()}, m.banners()...)
	parts = append(parts, m.body())
	if m.strip.visible {
		parts = append(parts, m.stripLine())
	}
	parts = append(parts, m.statusLine(), m.helpView())
	// Below the chrome's own height, keep the top of the screen.
	return pad(strings.Split(strings.Join(parts, "\n"), "\n"), m.height)
}

// chromeHeight is the lines around the body.
func (m Model) chromeHeight() int {
	n := 2 + len(m.banners()) + lineCount(m.helpView())
	if m.strip.visible {
		n++
	}
	return n
}

// bodyTop is the screen's line where the body starts: under the header
// and the banners.
func (m Model) bodyTop() int { return 1 + len(m.banners()) }

func lineCount(s string) int { return strings.Count(s, "\n") + 1 }

// body is the focused view, cut or filled to the room the chrome leaves:
// a view squeezed below its own minimum never pushes the chrome off.
func (m Model) body() string {
	h := max(m.height-m.chromeHeight(), 1)
	return pad(strings.Split(m.bodyView(), "\n"), h)
}

func (m Model) bodyView() string {
	h := max(m.height-m.chromeHeight(), 1)
	if !m.loaded {
		msg := "  connecting to " + m.opts.Title + "…"
		if m.conn.lost {
			msg = "  waiting for " + m.opts.Title + "…"
		}
		return pad([]string{"", m.c.st.muted.Render(msg)}, h)
	}
	if m.strip.open {
		return m.cmdLogView(h)
	}
	return m.focused().view(m)
}

// header is the app name, the tabs, and where the console is attached.
func (m Model) header() string {
	st := m.c.st
	var b strings.Builder
	b.WriteString(st.app.Render(" cronvisor "))
	for t, def := range m.screens.tabs {
		if m.tabHidden(tab(t)) {
			continue
		}
		name := def.name
		if tab(t) == m.tab && m.inDetail {
			name += " › " + m.detail.job
		}
		if tab(t) == m.tab {
			b.WriteString(st.tabActive.Render("[" + name + "]"))
		} else {
			b.WriteString(st.tab.Render(" " + name + " "))
		}
	}
	left := b.String()
	right := m.opts.Title + "  " + m.wall().Format("15:04:05") + " "
	room := m.width - ansi.StringWidth(left) - 1
	if room < 12 {
		return fit(left, m.width)
	}
	if m.opts.Embedded { // "embedded · CONFIG · log PATH": its start says most
		right = fit(m.opts.Title, min(ansi.StringWidth(m.opts.Title), room-len("  15:04:05 "))) +
			"  " + m.wall().Format("15:04:05") + " "
	} else { // a socket path: its end says most
		right = fitLeft(right, min(ansi.StringWidth(right), room))
	}
	gap := m.width - ansi.StringWidth(left) - ansi.StringWidth(right)
	return left + strings.Repeat(" ", max(gap, 0)) + st.where.Render(right)
}

// statusLine is a question, a recent message, or a summary of the jobs.
func (m Model) statusLine() string {
	st := m.c.st
	switch {
	case m.ask != nil:
		return st.confirm.Render(fit(" "+m.ask.text, m.width))
	case m.cmd.active:
		return m.cmdlineView()
	case m.conn.lost:
		s := " retrying now: "
		if m.conn.retryAt.After(m.wall()) {
			s = " next try in " + countdown(m.wall(), m.conn.retryAt) + ": "
		}
		return st.errText.Render(fit(s+m.conn.err.Error(), m.width))
	case m.status != "" && m.statusErr:
		return st.errText.Render(fit(" "+m.status, m.width))
	case m.status != "":
		return st.status.Render(fit(" "+m.status, m.width))
	}
	d := m.c.data
	n := d.count()
	s := " " + plural(len(d.jobs), "job") + " · " + itoa(n.running) + " running · " +
		plural(n.held, "lock") + " held"
	if m.opts.Embedded {
		s += " · scheduler in this process"
	}
	if m.opts.ReadOnly {
		s += " · read-only"
	}
	return st.status.Render(fit(s, m.width))
}

// helpView is the short help line, or the full help when ? is on, built
// from the focused screen's keymap.
func (m Model) helpView() string {
	g := m.keys
	g.Tabs.SetEnabled(!m.timelineFocused()) // the digits pick the timeline's window
	var km help.KeyMap = screenHelp{screen: m.screenKeys(), global: g}
	switch {
	case m.ask != nil:
		km = newConfirmKeys()
	case m.cmd.active:
		km = m.cmd.keys
	}
	h := m.help
	h.ShowAll = m.showHelp && m.ask == nil && !m.cmd.active
	v := " " + strings.ReplaceAll(h.View(km), "\n", "\n ")
	if h.ShowAll && lineCount(v)+6 > m.height { // leave the body a few lines
		h.ShowAll = false
		v = " " + h.View(km)
	}
	// help.Model lets the last item overflow when its ellipsis does not fit.
	lines := strings.Split(v, "\n")
	for i, l := range lines {
		lines[i] = fit(l, m.width)
	}
	return strings.Join(lines, "\n")
}

// screenKeys is the focused screen's keymap.
func (m Model) screenKeys() help.KeyMap { return m.focused().keyMap(m) }
