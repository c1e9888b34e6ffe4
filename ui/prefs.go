package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	tea "github.com/charmbracelet/bubbletea"
)

// prefs are the operator's choices of the jobs table, kept between
// sessions in the user's config dir (PrefsPath), never in jobs.yaml: a
// console is one person's view, the file is everyone's jobs. Hidden
// columns are named rather than shown ones, so that a column a newer
// version adds shows up.
type prefs struct {
	Hidden  []string `json:"hidden_columns,omitempty"`
	Sort    string   `json:"sort,omitempty"`
	Reverse bool     `json:"reverse,omitempty"`
}

// PrefsPath is where the console keeps its choices:
// $XDG_CONFIG_HOME/cronvisor/console.json (os.UserConfigDir); "" when
// there is no config dir (no HOME), and then nothing is kept.
func PrefsPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "cronvisor", "console.json")
}

// Messages of the preferences' reads and writes.
type (
	prefsMsg struct {
		p    prefs
		warn string // the file could not be used: why, in one line
	}
	prefsSavedMsg struct{ err error }
)

// loadPrefs reads the choices at path; none (defaults) when there is no
// file. A file that does not read, or names what this console does not
// know, is a warning naming it, and the defaults.
func loadPrefs(path string) tea.Cmd {
	return func() tea.Msg {
		p, err := readPrefs(path)
		if err != nil {
			return prefsMsg{warn: path + ": " + err.Error() + "; using the default columns and sort"}
		}
		return prefsMsg{p: p}
	}
}

func readPrefs(path string) (prefs, error) {
	var p prefs
	if path == "" {
		return p, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return prefs{}, fmt.Errorf("not valid JSON: %w", err)
	}
	for _, n := range append([]string{p.Sort}, p.Hidden...) {
		if _, ok := colNamed(n); !ok && n != "" {
			return prefs{}, fmt.Errorf("no column %q", n)
		}
	}
	return p, nil
}

// savePrefs writes p to path atomically: a console that dies mid-write,
// or two that write at once, leave one whole file.
func savePrefs(path string, p prefs) tea.Cmd {
	if path == "" {
		return nil
	}
	return func() tea.Msg { return prefsSavedMsg{err: writePrefs(path, p)} }
}

func writePrefs(path string, p prefs) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".console-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // gone after the rename; left by a failure
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// colNamed is the column console.json calls name.
func colNamed(name string) (jobCol, bool) {
	for c, d := range jobColDefs {
		if d.name == name {
			return jobCol(c), true
		}
	}
	return 0, false
}

// onPrefs applies the choices read at start, or says why they were not.
func (m Model) onPrefs(msg prefsMsg) (Model, tea.Cmd) {
	if msg.warn != "" {
		return m.say(msg.warn, true), nil
	}
	m.jobs = m.jobs.withPrefs(msg.p).Refresh()
	return m, nil
}

// onPrefsSaved says when the choices could not be kept.
func (m Model) onPrefsSaved(msg prefsSavedMsg) (Model, tea.Cmd) {
	if msg.err != nil {
		return m.say("cannot keep the column choices: "+msg.err.Error(), true), nil
	}
	return m, nil
}
