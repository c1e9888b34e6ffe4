package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestColumnChoicesAreKept: the chooser turns a column off, a sort key
// sorts, both are written to console.json at once, and the next console
// on the same file opens with them.
func TestColumnChoicesAreKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cronvisor", "console.json")
	m := loaded(t, newFake(), Options{Prefs: path}, 120, 30)
	m, cmd := press(m, "c", "down", " ") // LEFT off
	if !strings.Contains(m.View(), "[ ] LEFT") {
		t.Fatalf("the chooser does not show LEFT off:\n%s", m.View())
	}
	m, _ = follow(t, m, cmd)
	m, cmd = press(m, "esc", "P", "P")
	m, _ = follow(t, m, cmd)
	if s := m.View(); strings.Contains(s, "LEFT") || !strings.Contains(s, "PASSED ▴") {
		t.Fatalf("LEFT still shown or no reversed PASSED sort:\n%s", s)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, `"left"`) || !strings.Contains(s, `"sort": "passed"`) || !strings.Contains(s, `"reverse": true`) {
		t.Errorf("console.json reads %s", s)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".console-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}

	next := loaded(t, newFake(), Options{Prefs: path}, 120, 30)
	next, _ = follow(t, next, loadPrefs(path))
	if s := next.View(); strings.Contains(s, "LEFT") || !strings.Contains(s, "PASSED ▴") {
		t.Errorf("the next console did not open with the choices:\n%s", s)
	}
}

// TestBrokenPrefsFile: a file that does not read gives one line naming
// it, and the defaults.
func TestBrokenPrefsFile(t *testing.T) {
	for name, content := range map[string]string{"not JSON": `{"sort": `, "an unknown column": `{"hidden_columns": ["colour"]}`} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "console.json")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			m := loaded(t, newFake(), Options{Prefs: path}, 200, 30)
			m, _ = follow(t, m, loadPrefs(path))
			s := m.View()
			line := lineWith(s, path)
			if !strings.Contains(line, "using the default columns and sort") {
				t.Errorf("no warning naming %s:\n%s", path, s)
			}
			if !strings.Contains(s, "JOB ▾") || !strings.Contains(s, "LEFT") {
				t.Errorf("not the defaults:\n%s", s)
			}
		})
	}
}

func TestPrefsPathHonoursXDG(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	if got, want := PrefsPath(), filepath.Join(dir, "cronvisor", "console.json"); got != want {
		t.Errorf("PrefsPath() = %s, want %s", got, want)
	}
}
