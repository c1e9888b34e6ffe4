package history

import (
	"errors"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/testlog"
)

// TestFinishedSaysWhetherTheEndIsDurable: the Recorder's answer that the
// supervisor releases the run's lock on. A healthy store: nil, and the row
// is there; a failing one: ErrHeld, and the record waits in memory.
func TestFinishedSaysWhetherTheEndIsDurable(t *testing.T) {
	slot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	t.Run("healthy", func(t *testing.T) {
		j, store, _ := newTestWriter(t)
		start, end := runEvents("ok-run", slot)
		j.Started(start)
		if err := j.finished(end); err != nil {
			t.Fatalf("Finished = %v, want nil", err)
		}
		if r := record(t, store, "ok-run"); r.Outcome != run.OK {
			t.Errorf("outcome %q after Finished returned, want ok", r.Outcome)
		}
	})
	t.Run("failing store", func(t *testing.T) {
		store, _ := brokenStore(t)
		j := NewWriter(WriterConfig{Store: store, StateDir: t.TempDir(), RetryEvery: time.Hour})
		t.Cleanup(func() { j.Close() })
		start, end := runEvents("held-run", slot)
		if err := j.Admit("held-run"); err != nil {
			t.Fatal(err)
		}
		j.Started(start)
		if err := j.finished(end); !errors.Is(err, ErrHeld) {
			t.Fatalf("Finished = %v, want ErrHeld", err)
		}
		if h := j.Health(); !h.Degraded || h.Waiting != 2 {
			t.Errorf("health %+v, want degraded with the start and the end waiting", h)
		}
	})
}

// TestCloseDrains: Close commits what is queued (a start row returns
// before its commit) and waits for it; a write after Close is refused and
// counted lost, not left waiting.
func TestCloseDrains(t *testing.T) {
	store, _ := openTemp(t)
	var logged testlog.Buffer
	j := NewWriter(WriterConfig{Store: store, StateDir: t.TempDir(), Log: logged.Logger()})
	slot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, id := range []string{"a", "b", "c"} {
		start, _ := runEvents(id, slot)
		j.Started(start)
	}
	if err := j.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if r := record(t, store, id); r.Outcome != run.Running {
			t.Errorf("run %s: %q, want its start row committed by Close", id, r.Outcome)
		}
	}
	_, end := runEvents("a", slot)
	done := make(chan error, 1)
	go func() { done <- j.finished(end) }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Finished after Close = nil, want an error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Finished after Close is waiting")
	}
	if h := j.Health(); h.Lost != 1 {
		t.Errorf("health after a refused write: %+v, want 1 lost", h)
	}
	if got := logged.String(); !strings.Contains(got, "record run end failed") || !strings.Contains(got, "history writer closed") {
		t.Errorf("log %q, want the refused end reported", got)
	}
}

// TestSkippedAndRefusedFiresAreRecorded: a skip and a fire that ended
// without a run (a refused lock) each get one row.
func TestSkippedAndRefusedFiresAreRecorded(t *testing.T) {
	j, store, _ := newTestWriter(t)
	slot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	j.WriteSkip(run.Skip{Job: "job", RunID: "skip", Slot: slot, Time: slot, Reason: "paused"})
	if err := j.finished(run.End{Job: "job", RunID: "refused", Slot: slot, Ended: slot,
		Outcome: run.Error, Reason: "cannot take lock"}); err != nil {
		t.Fatal(err)
	}
	if r := record(t, store, "skip"); r.Outcome != run.Skipped || r.Reason != "paused" {
		t.Errorf("skip recorded as %q %q", r.Outcome, r.Reason)
	}
	if r := record(t, store, "refused"); r.Outcome != run.Error {
		t.Errorf("refused fire recorded as %q", r.Outcome)
	}
}

// TestInFlightFromAdmitToEnd: a run is this process's from its admission
// to its end, as recovery asks about runs whose times do not tell.
func TestInFlightFromAdmitToEnd(t *testing.T) {
	j, _, _ := newTestWriter(t)
	start, end := runEvents("r", time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	if j.InFlight("r") {
		t.Fatal("in flight before its admission")
	}
	if err := j.Admit("r"); err != nil {
		t.Fatal(err)
	}
	j.Started(start)
	if !j.InFlight("r") {
		t.Fatal("a started run is not in flight")
	}
	if err := j.finished(end); err != nil {
		t.Fatal(err)
	}
	if j.InFlight("r") {
		t.Fatal("in flight after its end")
	}
}
