package ui

import (
	"slices"
	"strings"
	"time"

	textcursor "github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
)

// command is one of the ":" command line's commands.
type command struct {
	name    string
	job     bool // takes a job's name
	changes bool // changes something: refused by a read-only console
	run     func(m Model, job string) (Model, tea.Cmd)
}

// commands are the ":" commands, in the order completion lists them.
func commands() []command {
	toTab := func(t tab) func(Model, string) (Model, tea.Cmd) {
		return func(m Model, _ string) (Model, tea.Cmd) { return m.showTab(t) }
	}
	verb := func(v string) func(Model, string) (Model, tea.Cmd) {
		return func(m Model, job string) (Model, tea.Cmd) { return m.request(requestMsg{verb: v, job: job}) }
	}
	return []command{
		{name: "jobs", run: toTab(tabJobs)},
		{name: "locks", run: toTab(tabLocks)},
		{name: "history", run: toTab(tabHistory)},
		{name: "timeline", run: toTab(tabTimeline)},
		{name: "hosts", run: toTab(tabHosts)},
		{name: "pause", job: true, changes: true, run: verb("pause")},
		{name: "resume", job: true, changes: true, run: verb("resume")},
		{name: "run", job: true, changes: true, run: verb("run")},
		{name: "kill", job: true, changes: true, run: verb("kill")},
		{name: "reload", changes: true, run: func(m Model, _ string) (Model, tea.Cmd) { return m.askReload() }},
		{name: "log", run: func(m Model, _ string) (Model, tea.Cmd) { m.strip.open = true; return m, nil }},
		{name: "help", run: func(m Model, _ string) (Model, tea.Cmd) { m.showHelp = true; return m.layout(), nil }},
		{name: "q", run: func(m Model, _ string) (Model, tea.Cmd) { return m.quit() }},
		{name: "quit", run: func(m Model, _ string) (Model, tea.Cmd) { return m.quit() }},
	}
}

// cmdKeys are the command line's own keys.
type cmdKeys struct {
	Run, Cancel, Complete key.Binding
}

func newCmdKeys() cmdKeys {
	return cmdKeys{
		Run:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "run")),
		Cancel:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		Complete: key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "complete")),
	}
}

// ShortHelp implements help.KeyMap.
func (k cmdKeys) ShortHelp() []key.Binding { return []key.Binding{k.Run, k.Complete, k.Cancel} }

// FullHelp implements help.KeyMap.
func (k cmdKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// cmdline is the ":" command line, shown on the status line while open.
type cmdline struct {
	input  textinput.Model
	keys   cmdKeys
	active bool
	hint   string // what a tab with several candidates offered
}

func newCmdline(c *common) cmdline {
	in := textinput.New()
	in.Prompt = ":"
	in.PromptStyle = c.st.prompt
	in.Cursor.SetMode(textcursor.CursorStatic) // no redraws for a blink
	return cmdline{input: in, keys: newCmdKeys()}
}

// openCmdline starts a command line.
func (m Model) openCmdline() (Model, tea.Cmd) {
	m.cmd.active, m.cmd.hint = true, ""
	m.cmd.input.SetValue("")
	return m, m.cmd.input.Focus()
}

// closeCmdline ends the command line.
func (m Model) closeCmdline() Model {
	m.cmd.active, m.cmd.hint = false, ""
	m.cmd.input.Blur()
	m.cmd.input.SetValue("")
	return m
}

// cmdKey handles a key while the command line is open.
func (m Model) cmdKey(msg tea.KeyMsg) (Model, tea.Cmd) {
	switch {
	case key.Matches(msg, m.cmd.keys.Cancel):
		return m.closeCmdline(), nil
	case key.Matches(msg, m.cmd.keys.Complete):
		var line string
		line, m.cmd.hint = m.complete(m.cmd.input.Value())
		m.cmd.input.SetValue(line)
		m.cmd.input.CursorEnd()
		return m, nil
	case key.Matches(msg, m.cmd.keys.Run):
		line := m.cmd.input.Value()
		return m.closeCmdline().runCommand(line)
	}
	if msg.Type == tea.KeyBackspace && m.cmd.input.Value() == "" {
		return m.closeCmdline(), nil // as in vim: backspace past the colon leaves
	}
	var cmd tea.Cmd
	m.cmd.input, cmd = m.cmd.input.Update(msg)
	m.cmd.hint = ""
	return m, cmd
}

// available are the commands this console offers: a read-only one none
// that changes anything.
func (m Model) available() []command {
	return slices.DeleteFunc(commands(), func(c command) bool { return c.changes && m.opts.ReadOnly })
}

// runCommand runs one command line.
func (m Model) runCommand(line string) (Model, tea.Cmd) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return m, nil
	}
	i := slices.IndexFunc(commands(), func(c command) bool { return c.name == f[0] })
	if i < 0 {
		return m.say("unknown command :"+f[0]+"; tab completes the commands", true), nil
	}
	c := commands()[i]
	switch {
	case c.changes && m.opts.ReadOnly:
		return m.say(readOnlyRefusal(":"+c.name), true), nil
	case c.job && len(f) != 2:
		return m.say(":"+c.name+" takes one job's name (tab completes it)", true), nil
	case !c.job && len(f) != 1:
		return m.say(":"+c.name+" takes no argument", true), nil
	case c.job:
		if _, ok := m.c.data.job(f[1]); !ok {
			return m.say("no job "+f[1]+" in jobs.yaml", true), nil
		}
		return c.run(m, f[1])
	}
	return c.run(m, "")
}

// complete is line with its last word completed: a command's name, or a
// job's name after a command that takes one. Several candidates complete
// to what they share, and hint lists them.
func (m Model) complete(line string) (done, hint string) {
	f := strings.Fields(line)
	trailing := strings.HasSuffix(line, " ")
	var cands []string
	var head string
	switch {
	case len(f) == 0 || (len(f) == 1 && !trailing):
		word := ""
		if len(f) == 1 {
			word = f[0]
		}
		for _, c := range m.available() {
			if strings.HasPrefix(c.name, word) {
				cands = append(cands, c.name)
			}
		}
	case (len(f) == 1 && trailing) || (len(f) == 2 && !trailing):
		i := slices.IndexFunc(m.available(), func(c command) bool { return c.name == f[0] })
		if i < 0 || !m.available()[i].job {
			return line, ""
		}
		word := ""
		if len(f) == 2 {
			word = f[1]
		}
		head = f[0] + " "
		for _, j := range m.c.data.jobs {
			if strings.HasPrefix(j.name, word) {
				cands = append(cands, j.name)
			}
		}
	default:
		return line, ""
	}
	switch len(cands) {
	case 0:
		return line, "no match"
	case 1:
		done = head + cands[0]
		if head == "" && m.takesJob(cands[0]) {
			done += " "
		}
		return done, ""
	}
	return head + commonPrefix(cands), strings.Join(cands, " ")
}

// takesJob reports whether the named command takes a job's name.
func (m Model) takesJob(name string) bool {
	i := slices.IndexFunc(commands(), func(c command) bool { return c.name == name })
	return i >= 0 && commands()[i].job
}

// commonPrefix is the longest prefix every one of ss starts with.
func commonPrefix(ss []string) string {
	p := ss[0]
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

// cmdlineView is the command line on the status line.
func (m Model) cmdlineView() string {
	in := m.cmd.input
	in.Width = max(min(m.width-4, len([]rune(in.Value()))+1), 1) // room for the hint after it
	s := in.View()
	if m.cmd.hint != "" {
		s += m.c.st.muted.Render("   " + m.cmd.hint)
	}
	return fit(s, m.width)
}

// showTab shows tab t, closing the detail.
func (m Model) showTab(t tab) (Model, tea.Cmd) {
	m.strip.open = false
	m = m.logRead(cliReads[t])
	if m.tabHidden(t) {
		return m.say("no "+m.screens.tabs[t].name+" tab: this daemon's history is its own (history_backend shares one)", true), nil
	}
	if enter := m.screens.tabs[t].enter; enter != nil && t != m.tab {
		m = enter(m)
	}
	m.tab, m.inDetail = t, false
	if !m.readsLocks() {
		m.c.data.dropFreeLocks()
		m.locks = m.locks.Refresh()
		return m.layout(), m.tabCmd()
	}
	if m.c.data.allLocks {
		return m.layout(), m.tabCmd()
	}
	// The free locks were not kept: read them all now, not at the next tick.
	m.lastLocks, m.offline.tried = time.Time{}, time.Time{}
	m.dirty = m.dirty || m.fullReads
	m = m.layout()
	var cmd tea.Cmd
	switch {
	case m.conn.lost:
		m, cmd = m.offlineDue()
	case !m.fetching:
		m, cmd = m.readDue(m.wall())
	}
	return m, tea.Batch(cmd, m.tabCmd())
}

// readOnlyRefusal says why a read-only console does not do what.
func readOnlyRefusal(what string) string {
	return "read-only console: " + what + " is off (--read-only, or console: {read_only: true} in jobs.yaml)"
}
