package ui

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// chooser is the jobs table's column chooser (`c`): every column in its
// order, each on or off. It takes the table's keys while open; the
// global ones (tabs, help, quit) stay, as it edits no text.
type chooser struct {
	open bool
	pos  int
}

// chooserKeys are the chooser's own keys.
type chooserKeys struct {
	Up, Down, Toggle, Close key.Binding
}

func newChooserKeys() chooserKeys {
	return chooserKeys{
		Up:     key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:   key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Toggle: key.NewBinding(key.WithKeys(" ", "enter", "x"), key.WithHelp("space", "show/hide")),
		Close:  key.NewBinding(key.WithKeys("c", "esc"), key.WithHelp("c/esc", "close")),
	}
}

// ShortHelp implements help.KeyMap.
func (k chooserKeys) ShortHelp() []key.Binding { return []key.Binding{k.Up, k.Down, k.Toggle, k.Close} }

// FullHelp implements help.KeyMap.
func (k chooserKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// chooserKey handles a key while the chooser is open; a change is kept
// at once.
func (v jobsView) chooserKey(msg tea.Msg) (jobsView, tea.Cmd) {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return v, nil
	}
	k := newChooserKeys()
	switch {
	case key.Matches(km, k.Close):
		v.chooser.open = false
		v.keys.actionKeys.fit(v.ref(), v.c.readOnly)
	case key.Matches(km, k.Up):
		v.chooser.pos = clamp(v.chooser.pos-1, int(jobColCount))
	case key.Matches(km, k.Down):
		v.chooser.pos = clamp(v.chooser.pos+1, int(jobColCount))
	case key.Matches(km, k.Toggle):
		c := jobCol(v.chooser.pos)
		if c == colJob {
			return v, nil // a row without its job's name says nothing
		}
		v.hidden[c] = !v.hidden[c]
		return v, v.keep()
	}
	return v, nil
}

// chooserView lists the columns with their state, in place of the table.
func (v jobsView) chooserView() string {
	st := v.c.st
	lines := []string{st.section.Render(" Columns") + st.muted.Render("  (shown left to right as far as the width allows)"), ""}
	for c, d := range jobColDefs {
		box := "[x] "
		if v.hidden[c] {
			box = "[ ] "
		}
		if jobCol(c) == colJob {
			box = "[=] "
		}
		sortKey := "   "
		if d.sortKey != "" {
			sortKey = "⇧" + d.sortKey + " "
		}
		text := box + fit(d.title, 15) + sortKey + d.about
		if c == v.chooser.pos {
			lines = append(lines, st.selected.Render(fit("› "+text, v.width)))
		} else {
			lines = append(lines, fit("  "+text, v.width))
		}
	}
	lines = append(lines, "", st.muted.Render(fit("  JOB stays. ⇧letter sorts by a column; again, the other way.", v.width)))
	return pad(lines, v.height)
}

// chooserHelp is the chooser's keys while open, else the table's.
func (v jobsView) chooserHelp() help.KeyMap {
	if v.chooser.open {
		return newChooserKeys()
	}
	return v.keys
}

// prefs are the view's choices, as console.json keeps them.
func (v jobsView) prefs() prefs {
	var p prefs
	for c, d := range jobColDefs {
		if v.hidden[c] {
			p.Hidden = append(p.Hidden, d.name)
		}
	}
	p.Sort, p.Reverse = jobColDefs[v.sort.by].name, v.sort.reverse
	return p
}

// withPrefs applies choices read from console.json.
func (v jobsView) withPrefs(p prefs) jobsView {
	v.hidden = [jobColCount]bool{}
	for _, n := range p.Hidden {
		if c, ok := colNamed(n); ok && c != colJob {
			v.hidden[c] = true
		}
	}
	v.sort = colSort{by: colJob}
	if c, ok := colNamed(p.Sort); ok {
		v.sort = colSort{by: c, reverse: p.Reverse}
	}
	return v
}

// keep writes the view's choices to console.json.
func (v jobsView) keep() tea.Cmd { return savePrefs(v.c.prefsPath, v.prefs()) }
