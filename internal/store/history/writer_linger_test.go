package history

import (
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// TestCoveredStartFoldsIntoItsEnd: a start that its lock record covers
// waits for its run's end and goes into the end's transaction, as one row
// with the start's fields and the end's.
func TestCoveredStartFoldsIntoItsEnd(t *testing.T) {
	w, store, _ := newTestWriter(t)
	slot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	w.Started(run.Start{Job: "a", RunID: "r1", Slot: slot, Started: slot, PID: 41, Attempt: 1, InFlightRecorded: true})
	code := 0
	if err := w.finished(run.End{Job: "a", RunID: "r1", Slot: slot, Started: slot, Ended: slot.Add(time.Second),
		Outcome: run.OK, ExitCode: &code, PID: 41, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	r := record(t, store, "r1")
	if r.Outcome != run.OK || !r.StartedAt.Equal(slot) || !r.EndedAt.Equal(slot.Add(time.Second)) || r.PID != 41 ||
		r.SupervisorPID == 0 || r.Host == "" || r.Attempt != 1 {
		t.Errorf("folded row = %+v", r)
	}
}

// TestCoveredStartWaitsAtMostLinger: a covered start whose run goes on is
// committed on its own once it has waited startLinger; an uncovered one
// is committed at once.
func TestCoveredStartWaitsAtMostLinger(t *testing.T) {
	const linger = time.Second
	for _, covered := range []bool{true, false} {
		w, store, _ := newTestWriterWith(t, WriterConfig{StartLinger: linger})
		slot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
		began := time.Now()
		w.Started(run.Start{Job: "a", RunID: "long", Slot: slot, Started: slot, PID: 7, InFlightRecorded: covered})
		var seen time.Duration
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			recs, err := store.Query(t.Context(), Filter{Job: "a"})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) == 1 && recs[0].Outcome == run.Running {
				seen = time.Since(began)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("covered %v: the start row never appeared", covered)
			}
		}
		if covered && seen < linger {
			t.Errorf("covered start committed after %v, before the linger %v: it did not wait for its end", seen, linger)
		}
		if covered && seen > linger+2*time.Second {
			t.Errorf("covered start committed after %v: it waited far past the linger %v", seen, linger)
		}
		if !covered && seen >= linger {
			t.Errorf("uncovered start committed after %v: it must not wait for the linger %v", seen, linger)
		}
		t.Logf("covered %v: start row visible after %v", covered, seen)
	}
}

// TestCloseCommitsALingeringStart: Close does not wait out the linger, and
// the start is committed, not lost.
func TestCloseCommitsALingeringStart(t *testing.T) {
	const linger = time.Minute
	w, store, _ := newTestWriterWith(t, WriterConfig{StartLinger: linger})
	slot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	w.Started(run.Start{Job: "a", RunID: "r", Slot: slot, Started: slot, PID: 7, InFlightRecorded: true})
	began := time.Now()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took >= 10*time.Second {
		t.Errorf("Close took %v: it waited for the linger of %v", took, linger)
	}
	if r := record(t, store, "r"); r.Outcome != run.Running {
		t.Errorf("start after Close = %+v, want a running row", r)
	}
}

// TestCoveredStartWaitsOutOtherRunsCommits: in a burst, other runs' ends
// commit while a covered start waits for its own end, and the two then
// fold into one row.
func TestCoveredStartWaitsOutOtherRunsCommits(t *testing.T) {
	w, store, _ := newTestWriterWith(t, WriterConfig{StartLinger: time.Minute})
	slot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	code := 0
	w.Started(run.Start{Job: "a", RunID: "waits", Slot: slot, Started: slot, PID: 7, InFlightRecorded: true})
	w.Started(run.Start{Job: "b", RunID: "other", Slot: slot, Started: slot, PID: 8})
	if err := w.finished(run.End{Job: "b", RunID: "other", Slot: slot, Started: slot, Ended: slot.Add(time.Second),
		Outcome: run.OK, ExitCode: &code, PID: 8}); err != nil {
		t.Fatal(err)
	}
	if recs, err := store.Query(t.Context(), Filter{Job: "a"}); err != nil || len(recs) != 0 {
		t.Fatalf("job a rows after another run's end committed: %+v, %v; want none yet", recs, err)
	}
	if err := w.finished(run.End{Job: "a", RunID: "waits", Slot: slot, Started: slot, Ended: slot.Add(2 * time.Second),
		Outcome: run.OK, ExitCode: &code, PID: 7}); err != nil {
		t.Fatal(err)
	}
	if r := record(t, store, "waits"); r.Outcome != run.OK || r.PID != 7 || !r.EndedAt.Equal(slot.Add(2*time.Second)) {
		t.Errorf("folded row = %+v", r)
	}
	if r := record(t, store, "other"); r.Outcome != run.OK {
		t.Errorf("other run = %+v", r)
	}
}

// TestFoldedEndOverARowAlreadyThere: a folded end is inserted without
// looking its row up first; if an earlier attempt of its batch did commit
// the row, the end is merged into it as a plain Finish would be: one row,
// the end's outcome, no error.
func TestFoldedEndOverARowAlreadyThere(t *testing.T) {
	s, _ := openTemp(t)
	ctx := testCtx(t)
	start := run.Record{Job: "a", RunID: "r1", ScheduledAt: minute(1), StartedAt: minute(1), PID: 9}
	if err := s.Start(ctx, start); err != nil {
		t.Fatal(err)
	}
	end := start
	end.Outcome, end.EndedAt, end.ExitCode = run.OK, minute(2), intp(0)
	for _, noStart := range []bool{true, true} { // the second: the row is final already
		if errs := s.Apply(ctx, []Write{{Kind: WriteFinish, Record: end, noStart: noStart}}); errs[0] != nil {
			t.Fatal(errs[0])
		}
	}
	recs, err := s.Query(ctx, Filter{Job: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Outcome != run.OK || !recs[0].EndedAt.Equal(minute(2)) || recs[0].PID != 9 {
		t.Errorf("rows = %+v, want the one row r1, ok at minute 2", recs)
	}
	fresh := run.Record{Job: "a", RunID: "r2", ScheduledAt: minute(3), StartedAt: minute(3), EndedAt: minute(4),
		Outcome: run.Failed, ExitCode: intp(3), PID: 10}
	if errs := s.Apply(ctx, []Write{{Kind: WriteFinish, Record: fresh, noStart: true}}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if r := record(t, s, "r2"); r.Outcome != run.Failed || r.ExitCode == nil || *r.ExitCode != 3 {
		t.Errorf("inserted folded row = %+v", r)
	}
}
