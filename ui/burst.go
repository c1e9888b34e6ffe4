package ui

import tea "github.com/charmbracelet/bubbletea"

// isBurst reports whether msg is several typed keys read at once.
// bubbletea reports every printable rune of one read as a single KeyRunes
// message ("kk" for `tmux send-keys k k`, key repeat, a laggy SSH link),
// and key.Matches compares the whole string: without splitting, the keys
// of a burst match no binding and are lost. A paste is text, not keys.
func isBurst(msg tea.KeyMsg) bool {
	return msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste
}

// burst applies each key of a burst in order, as if typed one by one; the
// commands they return run in the same order.
func (m Model) burst(msg tea.KeyMsg) (Model, tea.Cmd) {
	cmds := make([]tea.Cmd, 0, len(msg.Runes))
	for _, r := range msg.Runes {
		var cmd tea.Cmd
		m, cmd = m.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt})
		cmds = append(cmds, cmd)
	}
	return m, tea.Sequence(cmds...)
}
