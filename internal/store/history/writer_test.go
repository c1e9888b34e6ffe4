package history

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
)

// newTestWriter returns a Writer on a new store; failed writes fail the
// test.
func newTestWriter(t *testing.T) (*Writer, *Store, string) {
	t.Helper()
	return newTestWriterWith(t, WriterConfig{})
}

// newTestWriterWith is newTestWriter with cfg's settings; its store,
// state dir, log limit and logger are the test's.
func newTestWriterWith(t *testing.T, cfg WriterConfig) (*Writer, *Store, string) {
	t.Helper()
	dir := t.TempDir()
	store, err := Open(filepath.Join(dir, "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	cfg.Store, cfg.StateDir, cfg.LogLimit, cfg.Log = store, dir, 1<<20, failOnError(t)
	j := NewWriter(cfg)
	t.Cleanup(func() { j.Close() })
	return j, store, dir
}

func record(t *testing.T, store *Store, runID string) run.Record {
	t.Helper()
	recs, err := store.Query(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.RunID == runID {
			return r
		}
	}
	t.Fatalf("no record of run %s", runID)
	return run.Record{}
}

func TestRunLogs(t *testing.T) {
	slot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		lines    []string
		wantFile string // "" when no log file may exist
	}{
		{"silent run: no file, no log_path", nil, ""},
		{"output: the file holds it", []string{"one", "two"}, "stdout | one\nstdout | two\n"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j, store, dir := newTestWriter(t)
			id := "run-" + strconv.Itoa(i)
			j.Started(run.Start{Job: "job", RunID: id, Slot: slot, Started: slot, PID: 42})
			for _, l := range tc.lines {
				j.Output(run.Output{Job: "job", RunID: id, Time: slot, Stream: "stdout", Line: l})
			}
			code := 0
			_ = j.finished(run.End{Job: "job", RunID: id, Slot: slot, Started: slot,
				Ended: slot.Add(time.Second), PID: 42, Outcome: run.OK, ExitCode: &code})
			r := record(t, store, id)
			path := statedir.Dir(dir).RunLog("job", id)
			b, err := os.ReadFile(path)
			switch {
			case tc.wantFile == "":
				if r.LogPath != "" || !errors.Is(err, os.ErrNotExist) {
					t.Errorf("log_path %q, file error %v; want none", r.LogPath, err)
				}
			case err != nil || string(b) != tc.wantFile || r.LogPath != path:
				t.Errorf("log_path %q, file %q (%v); want %q holding %q", r.LogPath, b, err, path, tc.wantFile)
			}
			if r.Outcome != run.OK {
				t.Errorf("outcome %q, want ok", r.Outcome)
			}
		})
	}
}

// TestConcurrentRunsAllRecorded starts and ends many runs at once, as a
// batch of jobs on the same second does: every row is written, none fails.
func TestConcurrentRunsAllRecorded(t *testing.T) {
	j, store, _ := newTestWriter(t)
	slot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	const runs = 50
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			id, job := "run-"+strconv.Itoa(i), "job-"+strconv.Itoa(i)
			j.Started(run.Start{Job: job, RunID: id, Slot: slot, Started: slot})
			j.Output(run.Output{Job: job, RunID: id, Time: slot, Stream: "stderr", Line: "hi"})
			_ = j.finished(run.End{Job: job, RunID: id, Slot: slot, Started: slot, Ended: slot,
				Outcome: run.Failed})
		})
	}
	wg.Wait()
	recs, err := store.Query(context.Background(), Filter{Outcomes: []run.Outcome{run.Failed}})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != runs {
		t.Errorf("%d failed runs recorded, want %d", len(recs), runs)
	}
	for _, r := range recs {
		if r.LogPath == "" || !r.StartedAt.Equal(slot) {
			t.Errorf("run %s: log %q, started %v: the start and the end were not both recorded", r.RunID, r.LogPath, r.StartedAt)
		}
	}
	if open, err := store.OpenRuns(context.Background()); err != nil || len(open) != 0 {
		t.Errorf("open runs after all ended: %d (%v)", len(open), err)
	}
}
