package ui

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
)

// globalKeys work on every screen; the root model handles them.
// Interrupt (ctrl+c) works also while a filter is edited, and at a
// question, and is not listed in the help. Esc closes the ? help, leaves
// the detail, a filter and the command line.
type globalKeys struct {
	Next, Prev, Tabs, Command, Reload, Help, Esc, Quit key.Binding
	CmdLog                                             key.Binding
	Interrupt                                          key.Binding
	// Refused are the keys that change something, on only in a read-only
	// console, where they say why nothing happens; never in the help.
	Refused key.Binding
}

// newGlobalKeys are the global keys; readOnly turns off reload.
func newGlobalKeys(readOnly bool) globalKeys {
	k := globalKeys{
		Next:    key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next view")),
		Prev:    key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "prev view")),
		Tabs:    key.NewBinding(key.WithKeys("1", "2", "3", "4", "5"), key.WithHelp("1-5", "tabs")),
		Command: key.NewBinding(key.WithKeys(":"), key.WithHelp(":", "command")),
		CmdLog:  key.NewBinding(key.WithKeys("@"), key.WithHelp("@", "command log")),
		Reload:  key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "reload config")),
		Help:    key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Esc:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back/close")),
		Quit:    key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),

		Interrupt: key.NewBinding(key.WithKeys("ctrl+c")),
		Refused:   key.NewBinding(key.WithKeys("r", "p", "x", "R")),
	}
	k.Reload.SetEnabled(!readOnly)
	k.Refused.SetEnabled(readOnly)
	return k
}

// listKeys move through a list; every list screen embeds them. Move only
// names Up and Down together in the short help, which has no room for both.
type listKeys struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Move                                    key.Binding
}

func newListKeys() listKeys {
	return listKeys{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "first")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "last")),
		Move:     key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑↓", "move")),
	}
}

func (k listKeys) column() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}
}

// actionKeys act on one job, from the jobs table or the job's detail.
type actionKeys struct {
	Run, Pause, Kill key.Binding
}

func newActionKeys() actionKeys {
	return actionKeys{
		Run:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "run now")),
		Pause: key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause")),
		Kill:  key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "kill")),
	}
}

// fit enables the bindings that apply to job j and names p's action; a
// read-only console has none of them.
func (k *actionKeys) fit(j *jobRef, readOnly bool) {
	k.Run.SetEnabled(j != nil && !readOnly)
	k.Pause.SetEnabled(j != nil && !readOnly)
	k.Kill.SetEnabled(j != nil && j.running && !readOnly)
	if j != nil && j.paused {
		k.Pause.SetHelp("p", "resume")
	} else {
		k.Pause.SetHelp("p", "pause")
	}
}

// jobRef is what the action keys need to know about the selected job.
type jobRef struct {
	name            string
	running, paused bool
}

// filterKeys edit a list's filter.
type filterKeys struct {
	Filter, Clear, Apply key.Binding
}

func newFilterKeys() filterKeys {
	return filterKeys{
		Filter: key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Clear:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
		Apply:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply filter")),
	}
}

// confirmKeys answer a yes/no question.
type confirmKeys struct {
	Yes, No key.Binding
}

func newConfirmKeys() confirmKeys {
	return confirmKeys{
		Yes: key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes")),
		No:  key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n/esc", "no")),
	}
}

// ShortHelp implements help.KeyMap.
func (k confirmKeys) ShortHelp() []key.Binding { return []key.Binding{k.Yes, k.No} }

// FullHelp implements help.KeyMap.
func (k confirmKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// screenHelp joins a screen's keys with the global ones, which is the help
// the footer and the ? overlay show.
type screenHelp struct {
	screen help.KeyMap
	global globalKeys
}

// ShortHelp implements help.KeyMap.
func (h screenHelp) ShortHelp() []key.Binding {
	return append(h.screen.ShortHelp(), h.global.Help, h.global.Quit)
}

// FullHelp implements help.KeyMap.
func (h screenHelp) FullHelp() [][]key.Binding {
	g := h.global
	return append(h.screen.FullHelp(), []key.Binding{g.Next, g.Prev, g.Tabs, g.Command, g.CmdLog, g.Reload, g.Help, g.Esc, g.Quit})
}
