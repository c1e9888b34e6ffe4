package ui

import (
	"context"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"cronvisor/internal/ctl"
)

// refreshEvery is how often the console re-reads the rows on screen and,
// while shown, the locks: lock holders outside cronvisor are no event and
// only show up this way.
const refreshEvery = 5 * time.Second

// Model is the console's root model. It owns the store, routes messages
// to the views, and does all I/O through tea.Cmds.
type Model struct {
	ctx  context.Context
	src  Source
	opts Options
	c    *common
	keys globalKeys
	help help.Model

	screens  paneSet // the panes of the screens below, indexed by tab
	tab      tab
	inDetail bool
	jobs     jobsView
	split    jobsSplit // the Jobs tab's table and preview (preview.go)
	detail   detailView
	locks    locksView
	hist     historyView
	tl       timelineView
	hosts    hostsView // the fleet's, with a shared history (hosts.go)

	ask     *question // a pending yes/no question, nil if none
	cmd     cmdline   // the ":" command line
	strip   cmdStrip  // the command strip and log (cmdstrip.go)
	conn    conn
	events  <-chan ctl.WireEvent
	daemon  ctl.DaemonStatus // the daemon's own state, as last read
	offline offlineState
	// refused are a refused reload's problems, shown until a good file loads.
	refused   []string
	refusedAt time.Time

	live, grey styles // c.st is grey while the source is lost

	loaded    bool // a first snapshot arrived
	fetching  bool
	dirty     bool // an event changed state since the last read
	lastFetch time.Time
	lastLocks time.Time // when locks were last read
	// stale names the jobs events changed since the last read by name,
	// needFull asks for the whole table (a reload, a resync), and
	// fullReads says the daemon cannot read by name (see rows.go).
	stale     map[string]bool
	needFull  bool
	fullReads bool
	lastCheck time.Time // the last tick's: next fires up to it are read
	lastShown []string  // the rows on screen at their last read
	lastRows  time.Time // when they were read
	status    string
	statusErr bool
	statusAt  time.Time
	showHelp  bool
	width     int
	height    int
}

// question is a yes/no confirmation; yes runs onYes.
type question struct {
	text  string
	onYes tea.Cmd
	quit  bool   // the question is whether to quit
	yes   string // the status line's while onYes runs; "" keeps it
}

func newModel(ctx context.Context, src Source, opts Options, r *lipgloss.Renderer) Model {
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	c := &common{st: newStyles(r, defaultTheme()), data: newStore()}
	c.now = func() time.Time {
		if !c.asOf.IsZero() {
			return c.asOf
		}
		return opts.Clock()
	}
	c.readLog = func(job, runID string) tea.Cmd {
		var from logReader = src
		if c.lost && opts.Offline != nil {
			from = opts.Offline
		}
		return readLog(ctx, from, job, runID)
	}
	c.readOnly, c.prefsPath = opts.ReadOnly, opts.Prefs
	h := help.New()
	h.Styles = c.st.help
	return Model{ctx: ctx, src: src, opts: opts, c: c, keys: newGlobalKeys(opts.ReadOnly), help: h, cmd: newCmdline(c),
		live: c.st, grey: newStyles(r, greyTheme(defaultTheme())),
		screens: newPaneSet(),
		jobs:    newJobsView(c), detail: newDetailView(c), locks: newLocksView(c), hist: newHistoryView(c), tl: newTimelineView(c),
		hosts: newHostsView(c),
		stale: map[string]bool{}, fetching: true} // Init's first read; no tick starts another meanwhile
}

// Init subscribes to events, reads the first snapshot and starts the
// clock.
func (m Model) Init() tea.Cmd {
	return tea.Batch(append(m.startCmds(), tick(), loadPrefs(m.opts.Prefs))...)
}

// startCmds are Init's calls to the source.
func (m Model) startCmds() []tea.Cmd {
	return []tea.Cmd{m.subscribe(), m.fetchSnapshot(true), m.fetchHistory(""), m.fetchHosts()}
}

// Update implements tea.Model.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	return m.update(msg)
}

// update is Update with the concrete type, in the order the style guide
// sets: window size to all children, global keys, source messages, then
// the focused view.
func (m Model) update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m.layout(), nil
	case tea.KeyMsg:
		if isBurst(msg) {
			return m.burst(msg)
		}
		if mm, cmd, ok := m.globalKey(msg); ok {
			return mm, cmd
		}
	case eventsMsg:
		return m.onEvents(msg)
	case subscribedMsg:
		return m.onSubscribed(msg)
	case snapshotMsg:
		return m.onSnapshot(msg)
	case rowsMsg:
		return m.onRows(msg)
	case historyMsg:
		return m.onHistory(msg)
	case hostsMsg:
		return m.onHosts(msg)
	case reconnectMsg:
		m.conn.pending = false
		return m, m.subscribe()
	case tickMsg:
		return m.onTick()
	case actionMsg:
		return m.logAction(msg).onAction(msg)
	case offlineMsg:
		return m.onOffline(msg)
	case openJobMsg: // over the current tab, which esc returns to
		m.inDetail = true
		m.detail = m.detail.open(msg.job)
		m = m.logRead("status " + msg.job)
		return m.layout(), m.fetchHistory(msg.job)
	case closeDetailMsg:
		m.inDetail = false
		return m.layout(), m.tabCmd()
	case requestMsg:
		return m.request(msg)
	case timelineNeedMsg, timelineMsg:
		return m.onTimeline(msg)
	case openRunMsg:
		return m.openRun(msg)
	case noticeMsg:
		return m.say(msg.text, msg.err), nil
	case prefsMsg:
		return m.onPrefs(msg)
	case prefsSavedMsg:
		return m.onPrefsSaved(msg)
	case tea.MouseMsg: // to the view's own lines: the body's first is its 0
		msg.Y -= m.bodyTop()
		return m.updateFocused(msg)

	}
	return m.updateFocused(msg)
}

// updateFocused hands msg to the screen on display.
func (m Model) updateFocused(msg tea.Msg) (Model, tea.Cmd) {
	return m.focused().update(m, msg)
}

// editing reports whether a text input (the command line, or the focused
// screen's filter) takes the keys, when only ctrl+c stays global.
func (m Model) editing() bool { return m.cmd.active || m.focused().editing(m) }

// globalKey handles the keys that work everywhere; ok is false when the
// key belongs to the focused view.
func (m Model) globalKey(msg tea.KeyMsg) (Model, tea.Cmd, bool) {
	if m.ask != nil {
		mm, cmd := m.answer(msg)
		return mm, cmd, true
	}
	if key.Matches(msg, m.keys.Interrupt) || (!m.editing() && key.Matches(msg, m.keys.Quit)) {
		mm, cmd := m.quit()
		return mm, cmd, true
	}
	if m.cmd.active {
		mm, cmd := m.cmdKey(msg)
		return mm, cmd, true
	}
	if m.editing() {
		return m, nil, false
	}
	switch {
	case key.Matches(msg, m.keys.Help):
		m.showHelp = !m.showHelp
		return m.layout(), nil, true
	case m.showHelp && key.Matches(msg, m.keys.Esc):
		m.showHelp = false
		return m.layout(), nil, true
	case key.Matches(msg, m.keys.CmdLog):
		m.strip.open = !m.strip.open
		return m, nil, true
	case m.strip.open && key.Matches(msg, m.keys.Esc):
		m.strip.open = false
		return m, nil, true
	case key.Matches(msg, m.keys.Command):
		mm, cmd := m.openCmdline()
		return mm, cmd, true
	case key.Matches(msg, m.keys.Tabs) && !m.timelineFocused(): // there the digits pick the window
		mm, cmd := m.showTab(m.tabOfKey(msg.String()))
		return mm, cmd, true
	case key.Matches(msg, m.keys.Next):
		mm, cmd := m.showTab(m.nextTab(1))
		return mm, cmd, true
	case key.Matches(msg, m.keys.Prev):
		mm, cmd := m.showTab(m.nextTab(tabCount - 1))
		return mm, cmd, true
	case key.Matches(msg, m.keys.Reload):
		mm, cmd := m.askReload()
		return mm, cmd, true
	case key.Matches(msg, m.keys.Refused):
		return m.say(readOnlyRefusal(refusedVerb(msg.String())), true), nil, true
	}
	return m, nil, m.strip.open // the command log takes the screen's keys

}

// quit ends the program, asking first when ending it would abandon the
// runs of an embedded scheduler.
func (m Model) quit() (Model, tea.Cmd) {
	n := m.c.data.running()
	if !m.opts.Embedded || n == 0 {
		return m, tea.Quit
	}
	text := plural(n, "job") + " running; quit and end them? y/n"
	if n == 1 {
		text = "1 job running; quit and end it? y/n"
	}
	m.ask = &question{quit: true, onYes: tea.Quit, text: text}
	return m, nil
}

// answer handles a key while a question is shown. ctrl+c at a quit
// question quits; at any other it asks the quit question instead.
func (m Model) answer(msg tea.KeyMsg) (Model, tea.Cmd) {
	k := newConfirmKeys()
	q := m.ask
	switch {
	case key.Matches(msg, m.keys.Interrupt) && q.quit:
		m.ask = nil
		return m, tea.Quit
	case key.Matches(msg, m.keys.Interrupt):
		m.ask = nil
		return m.quit()
	case key.Matches(msg, k.Yes):
		m.ask = nil
		if q.yes != "" {
			m = m.say(q.yes, false)
		}
		return m, q.onYes
	case key.Matches(msg, k.No):
		m.ask = nil
		return m.say("cancelled", false), nil
	}
	return m, nil
}

// request runs an action a view or the command line asked for; kill
// asks first, and so does a run of a paused or disabled job (askRun). A
// read-only console refuses every one: its keys are off, and this is the
// one door they all go through.
func (m Model) request(r requestMsg) (Model, tea.Cmd) {
	if m.opts.ReadOnly {
		return m.say(readOnlyRefusal(r.verb), true), nil
	}
	switch r.verb {
	case "run":
		return m.askRun(r.job)
	case "kill":
		return m.askKill(r.job)
	}
	return m, m.action(r.verb, r.job)
}

// askKill asks before killing job's runs; a job not running has none.
func (m Model) askKill(job string) (Model, tea.Cmd) {
	j, ok := m.c.data.job(job)
	if !ok || j.State != ctl.StateRunning {
		return m.say(job+" is not running", true), nil
	}
	m.ask = &question{onYes: m.action("kill", job), yes: "killing " + job + ": SIGTERM, then SIGKILL after its kill_grace…",
		text: "Kill " + job + " (pid " + itoa(j.PID) + ", running " + dur(m.c.now().Sub(j.StartedAt)) + ")? Its whole process group ends. y/n"}
	return m, nil
}

// refusedVerb names what a key refused by a read-only console would do.
func refusedVerb(k string) string {
	switch k {
	case "r":
		return "run now"
	case "p":
		return "pause/resume"
	case "x":
		return "kill"
	}
	return "reload"
}

// askReload asks before reloading jobs.yaml: a reload can add, drop and
// change every job at once.
func (m Model) askReload() (Model, tea.Cmd) {
	if m.opts.ReadOnly {
		return m.say(readOnlyRefusal("reload"), true), nil
	}
	m.ask = &question{onYes: m.action("reload", ""), yes: "reloading jobs.yaml…",
		text: "Reload jobs.yaml? Jobs it adds, drops or changes take effect now. y/n"}
	return m, nil
}

// wall is the time now, for the chrome; the views measure against
// c.now(), which stands still while the source is lost.
func (m Model) wall() time.Time { return m.opts.Clock() }

// say shows a message on the status line for a few seconds.
func (m Model) say(s string, isErr bool) Model {
	m.status, m.statusErr, m.statusAt = localTimes(m.wall(), s), isErr, m.wall()
	return m
}

// layout gives every screen the body's size, which depends on the window
// and on what the chrome shows (the banner, the full help).
func (m Model) layout() Model {
	h := max(m.height-m.chromeHeight(), 1)
	m.help.Width = max(m.width-1, 1)
	for _, t := range m.screens.tabs {
		m = t.pane.setSize(m, m.width, h)
	}
	m = m.screens.detail.setSize(m, m.width, h)
	return m
}

// refreshViews makes the screens re-read the store after it changed; the
// detail only while it is open.
func (m Model) refreshViews() Model {
	for _, t := range m.screens.tabs {
		m = t.pane.refresh(m)
	}
	if m.inDetail {
		m = m.screens.detail.refresh(m)
	}
	return m
}
