package history

import (
	"fmt"
	"os"
	"testing"

	"cronvisor/internal/base/run"
)

// TestLogMarksACutInProgress: once over its limit, a run's log on disk is
// its head and run.LogCutOpen (what `logs` shows of a live run, and how a
// keeper taking the log over knows its tail was held in memory); Close
// writes the marker and the tail in its place.
func TestLogMarksACutInProgress(t *testing.T) {
	dir := t.TempDir()
	l, err := NewLog(dir, "job", "r1", 100)
	if err != nil {
		t.Fatal(err)
	}
	for n := range 100 {
		if err := l.Write("stdout", fmt.Sprintf("line-%02d", n)); err != nil {
			t.Fatal(err)
		}
		if n == 10 {
			if got, _ := os.ReadFile(l.Path()); string(got) != numbered(0, 1)+run.LogCutOpen {
				t.Errorf("the log past its limit:\n%s\nwant the head and the open cut", got)
			}
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	want := numbered(0, 1) + run.LogCutMarker(1615, false) + numbered(97, 98, 99)
	if got, _ := os.ReadFile(l.Path()); string(got) != want {
		t.Errorf("the closed log:\n%s\nwant:\n%s", got, want)
	}
}
