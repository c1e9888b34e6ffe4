package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// TestLogRelink: a run's log whose state dir was deleted gets a file at
// its path again with every line, under its limit as before.
func TestLogRelink(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int64
		want  string
	}{
		{"no limit", 0, "stdout | one\nstdout | two\nstdout | three\nstdout | four\n"},
		{"past its limit", 40, "stdout | one\n... [cronvisor: 28 bytes cut] ...\nstdout | four\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			l, err := NewLog(dir, "a", "r1", tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			mustDo(t, l.Write("stdout", "one"))
			mustDo(t, l.Write("stdout", "two"))
			if ok, err := l.Relink(); ok || err != nil {
				t.Fatalf("Relink of a log still at its path: %v, %v; want false", ok, err)
			}
			mustDo(t, os.RemoveAll(dir))
			if ok, err := l.Relink(); !ok || err != nil {
				t.Fatalf("Relink of a deleted log: %v, %v; want true", ok, err)
			}
			mustDo(t, l.Write("stdout", "three"))
			mustDo(t, l.Write("stdout", "four"))
			mustDo(t, l.Close())
			b, err := os.ReadFile(l.Path())
			if err != nil || string(b) != tc.want {
				t.Errorf("log after the deletion: %q, %v\nwant %q", b, err, tc.want)
			}
		})
	}
}

// TestWriterRelinkLogs: the Writer relinks the logs of its running runs,
// and the record's log_path names the file with all of the output.
func TestWriterRelinkLogs(t *testing.T) {
	w, store, dir := newTestWriter(t)
	now := time.Now()
	w.Started(run.Start{Job: "a", RunID: "r1", Slot: now, Started: now, PID: 1})
	w.Output(run.Output{Job: "a", RunID: "r1", Stream: "stdout", Line: "before"})
	mustDo(t, os.RemoveAll(filepath.Join(dir, "logs")))
	if n, err := w.RelinkLogs(); n != 1 || err != nil {
		t.Fatalf("RelinkLogs: %d, %v; want 1", n, err)
	}
	w.Output(run.Output{Job: "a", RunID: "r1", Stream: "stdout", Line: "after"})
	mustDo(t, w.finished(run.End{Job: "a", RunID: "r1", Slot: now, Started: now, Ended: now, Outcome: run.OK, ExitCode: intp(0)}))
	r := record(t, store, "r1")
	b, err := os.ReadFile(r.LogPath)
	if err != nil || !strings.Contains(string(b), "before") || !strings.Contains(string(b), "after") {
		t.Errorf("log %s: %q, %v; want both lines", r.LogPath, b, err)
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
