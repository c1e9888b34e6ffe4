package ui

import (
	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
)

// component is one screen of the console, soft-serve's common.Component
// with values rather than pointers. Each method returns the screen's own
// type V, so that the root keeps each screen in a field of that type and
// never needs a type assertion.
type component[V any] interface {
	Update(msg tea.Msg) (V, tea.Cmd)
	View() string
	SetSize(w, h int) V
	// Refresh re-reads the store after it changed.
	Refresh() V
	// KeyMap is the screen's keys, for the footer and the ? help.
	KeyMap() help.KeyMap
	// Editing reports whether a text input has the keys, when only ctrl+c
	// stays global.
	Editing() bool
}

// pane reaches one of the root model's screens. The root indexes panes
// (by tab, or the detail when it is open) instead of switching on the tab.
// A pane takes and returns the Model by value, as the root's own methods
// do: a pointer to it through an interface call would move the Model,
// styles and all, to the heap at every call.
type pane interface {
	update(m Model, msg tea.Msg) (Model, tea.Cmd)
	view(m Model) string
	setSize(m Model, w, h int) Model
	refresh(m Model) Model
	keyMap(m Model) help.KeyMap
	editing(m Model) bool
}

// field is the pane of the screen a Model keeps in one of its fields:
// get reads the field, set returns the Model with it replaced.
type field[V component[V]] struct {
	get func(m Model) V
	set func(m Model, v V) Model
}

func (f field[V]) update(m Model, msg tea.Msg) (Model, tea.Cmd) {
	v, cmd := f.get(m).Update(msg)
	return f.set(m, v), cmd
}

func (f field[V]) view(m Model) string             { return f.get(m).View() }
func (f field[V]) setSize(m Model, w, h int) Model { return f.set(m, f.get(m).SetSize(w, h)) }
func (f field[V]) refresh(m Model) Model           { return f.set(m, f.get(m).Refresh()) }
func (f field[V]) keyMap(m Model) help.KeyMap      { return f.get(m).KeyMap() }
func (f field[V]) editing(m Model) bool            { return f.get(m).Editing() }

// detailPane is the job detail's pane.
func detailPane() pane {
	return field[detailView]{
		get: func(m Model) detailView { return m.detail },
		set: func(m Model, v detailView) Model { m.detail = v; return m },
	}
}

// paneSet is the root's panes, built once with the model: the tabs in
// their order on the header, and the detail.
type paneSet struct {
	tabs   [tabCount]tabDef
	detail pane
}

func newPaneSet() paneSet {
	return paneSet{tabs: tabs(), detail: detailPane()}
}

// focused is the pane on screen: the detail when it is open, else the
// tab's.
func (m Model) focused() pane {
	if m.inDetail {
		return m.screens.detail
	}
	return m.screens.tabs[m.tab].pane
}

// tab is a top-level screen; the job detail opens over the jobs or the
// history tab.
type tab int

const (
	tabJobs tab = iota
	tabLocks
	tabHistory
	tabTimeline
	tabHosts
	tabCount
)

// tabDef is what the root knows of a tab besides its pane.
type tabDef struct {
	name string
	key  string // the key that shows it
	pane pane
	// hidden says the tab is not there now (Hosts without a shared
	// history); nil: always there.
	hidden func(m Model) bool
	// readsLocks: the screen shows the locks, which a refresh then reads
	// every time rather than once a refresh period.
	readsLocks bool
	// onShow is what the screen needs read when it is shown; nil: nothing.
	onShow func(m Model) tea.Cmd
	// enter resets the screen as it is shown from another tab; nil: it
	// stays as it was left.
	enter func(m Model) Model
}

// tabs are the top-level screens in their order on the header.
func tabs() [tabCount]tabDef {
	return [tabCount]tabDef{
		tabJobs: {name: "Jobs", key: "1", pane: newJobsPane()},
		tabLocks: {name: "Locks", key: "2", readsLocks: true, pane: field[locksView]{
			get: func(m Model) locksView { return m.locks },
			set: func(m Model, v locksView) Model { m.locks = v; return m },
		}},
		tabHistory: {name: "History", key: "3", onShow: func(m Model) tea.Cmd { return m.fetchHistory("") },
			enter: func(m Model) Model { m.hist = m.hist.top(); return m }, pane: field[historyView]{
				get: func(m Model) historyView { return m.hist },
				set: func(m Model, v historyView) Model { m.hist = v; return m },
			}},
		tabTimeline: {name: "Timeline", key: "4", onShow: func(m Model) tea.Cmd { _, cmd := m.timelineDue(); return cmd }, pane: field[timelineView]{
			get: func(m Model) timelineView { return m.tl },
			set: func(m Model, v timelineView) Model { m.tl = v; return m },
		}},
		tabHosts: {name: "Hosts", key: "5", hidden: func(m Model) bool { return !m.hosts.data.Shared },
			onShow: func(m Model) tea.Cmd { return m.fetchHosts() }, pane: field[hostsView]{
				get: func(m Model) hostsView { return m.hosts },
				set: func(m Model, v hostsView) Model { m.hosts = v; return m },
			}},
	}
}

// tabOfKey is the tab a number key shows.
func (m Model) tabOfKey(k string) tab {
	for t, def := range m.screens.tabs {
		if def.key == k {
			return tab(t)
		}
	}
	return m.tab
}

// nextTab is the tab step places on from the current one, past the tabs
// that are not there.
func (m Model) nextTab(step tab) tab {
	t := m.tab
	for range tabCount {
		t = (t + step) % tabCount
		if !m.tabHidden(t) {
			return t
		}
	}
	return m.tab
}

// tabHidden reports whether tab t is not there now.
func (m Model) tabHidden(t tab) bool {
	h := m.screens.tabs[t].hidden
	return h != nil && h(m)
}

// tabCmd fetches what a freshly shown tab needs.
func (m Model) tabCmd() tea.Cmd {
	if show := m.screens.tabs[m.tab].onShow; show != nil {
		return show(m)
	}
	return nil
}
