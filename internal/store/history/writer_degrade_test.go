package history

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/testlog"
)

// brokenStore is a store whose directory is a regular file, so that every
// write fails (as root too); mend makes it writable.
func brokenStore(t *testing.T) (store *Store, mend func()) {
	t.Helper()
	dir := t.TempDir()
	blocker := filepath.Join(dir, "state")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	store, err := Unopened(filepath.Join(blocker, "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store, func() {
		if err := os.Remove(blocker); err != nil {
			t.Fatal(err)
		}
	}
}

func runEvents(id string, slot time.Time) (run.Start, run.End) {
	code := 0
	return run.Start{Job: "job", RunID: id, Slot: slot, Started: slot, PID: 1},
		run.End{Job: "job", RunID: id, Slot: slot, Started: slot, Ended: slot.Add(time.Second),
			Outcome: run.OK, ExitCode: &code}
}

// TestFailingStoreHoldsRecordsUntilItRecovers: while the store fails,
// runs are recorded in memory without waiting; once it takes writes, every
// record is written once and the Writer is healthy again.
func TestFailingStoreHoldsRecordsUntilItRecovers(t *testing.T) {
	store, mend := brokenStore(t)
	j := NewWriter(WriterConfig{Store: store, StateDir: t.TempDir(), LogLimit: 1 << 20, RetryEvery: 10 * time.Millisecond})
	t.Cleanup(func() { j.Close() })
	slot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	const runs = 5
	for i := range runs {
		id := "run-" + string(rune('a'+i))
		if err := j.Admit(id); err != nil {
			t.Fatalf("admit %s: %v", id, err)
		}
		start, end := runEvents(id, slot.Add(time.Duration(i)*time.Minute))
		j.Started(start)
		_ = j.finished(end)
	}
	j.WriteSkip(run.Skip{Job: "job", RunID: "skip-1", Slot: slot, Time: slot, Reason: "paused"})
	h := j.Health()
	if !h.Degraded || h.Waiting != 2*runs+1 || h.Reason == "" || h.Since.IsZero() {
		t.Fatalf("health while failing = %+v, want degraded with %d waiting", h, 2*runs+1)
	}
	mend()
	testlog.Poll(10*time.Second, func() bool { return !j.Health().Degraded }) // the check below says what it found
	if h := j.Health(); h.Degraded || h.Waiting != 0 || h.String() != "" {
		t.Fatalf("health after mending = %+v (%q), want healthy", h, h.String())
	}
	recs, err := store.Query(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != runs+1 {
		t.Errorf("%d records, want %d", len(recs), runs+1)
	}
	for _, r := range recs {
		if r.Outcome == run.Running {
			t.Errorf("run %s left running", r.RunID)
		}
	}
}

// TestFullBacklogRefusesRunsAndCountsLostRecords: at the bound, a run is
// not admitted and a record without a reservation is counted as lost.
func TestFullBacklogRefusesRunsAndCountsLostRecords(t *testing.T) {
	store, _ := brokenStore(t)
	j := NewWriter(WriterConfig{Store: store, StateDir: t.TempDir(), LogLimit: 1 << 20, MaxWaiting: 4, RetryEvery: time.Hour})
	t.Cleanup(func() { j.Close() })
	slot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, id := range []string{"a", "b"} {
		if err := j.Admit(id); err != nil {
			t.Fatalf("admit %s: %v", id, err)
		}
	}
	if err := j.Admit("c"); !errors.Is(err, ErrBacklogFull) {
		t.Fatalf("third run admitted (%v), want ErrBacklogFull", err)
	}
	for _, id := range []string{"a", "b"} {
		start, end := runEvents(id, slot)
		j.Started(start)
		_ = j.finished(end)
	}
	j.WriteSkip(run.Skip{Job: "job", RunID: "s", Slot: slot, Time: slot, Reason: "paused"})
	h := j.Health()
	if h.Waiting != 4 || h.Lost != 1 {
		t.Errorf("health = %+v, want 4 waiting and 1 lost", h)
	}
	if s := h.String(); s == "" {
		t.Error("health line empty while degraded")
	}
}
