package history

import (
	"database/sql"
	"slices"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// TestResourcesMigrateAnOldDatabase: a database of the six migrations
// before the resource columns opens, its rows read as holding no slot and
// not waiting, and a run started afterwards keeps its slots and wait
// through its end, which does not repeat them.
func TestResourcesMigrateAnOldDatabase(t *testing.T) {
	ctx := testCtx(t)
	s, p := openOld(t, 6)
	if err := s.Start(ctx, run.Record{Job: "a", RunID: "new", StartedAt: minute(1),
		Resources: []string{"db/0", "disk/1"}, ResourceWait: 2500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(ctx, run.Record{RunID: "new", Outcome: run.OK, EndedAt: minute(2)}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Query(ctx, Filter{Job: "a"})
	if err != nil || len(got) != 2 {
		t.Fatalf("Query = %d records, %v; want 2", len(got), err)
	}
	for _, r := range got {
		wantSlots, wantWait := []string(nil), time.Duration(0)
		if r.RunID == "new" {
			wantSlots, wantWait = []string{"db/0", "disk/1"}, 2500*time.Millisecond
		}
		if !slices.Equal(r.Resources, wantSlots) || r.ResourceWait != wantWait {
			t.Errorf("%s: resources %q wait %v, want %q %v", r.RunID, r.Resources, r.ResourceWait, wantSlots, wantWait)
		}
	}
	var text string
	var wait sql.NullInt64
	raw, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if err := raw.QueryRowContext(ctx, `SELECT resources, resource_wait_ms FROM runs WHERE run_id = 'old'`).Scan(&text, &wait); err != nil || text != "" || wait.Valid {
		t.Errorf("old row: %q %v (%v), want '' and NULL", text, wait, err)
	}
}

// TestWriterRecordsResources: the Writer keeps a run's slots and wait
// from its Start through its end, and a skip's wait.
func TestWriterRecordsResources(t *testing.T) {
	j, store, _ := newTestWriter(t)
	slot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	j.Started(run.Start{Job: "job", RunID: "ran", Slot: slot, Started: slot, PID: 42,
		Resources: []string{"db/1"}, ResourceWait: 3 * time.Second})
	code := 0
	_ = j.finished(run.End{Job: "job", RunID: "ran", Slot: slot, Started: slot,
		Ended: slot.Add(time.Second), PID: 42, Outcome: run.OK, ExitCode: &code})
	j.WriteSkip(run.Skip{Job: "job", RunID: "gave-up", Slot: slot.Add(time.Hour), Time: slot.Add(time.Hour),
		Reason: "resource db full after waiting 1m0s", Class: run.ClassResourceFull, ResourceWait: time.Minute})
	if r := record(t, store, "ran"); !slices.Equal(r.Resources, []string{"db/1"}) || r.ResourceWait != 3*time.Second {
		t.Errorf("run: resources %q wait %v", r.Resources, r.ResourceWait)
	}
	if r := record(t, store, "gave-up"); r.Resources != nil || r.ResourceWait != time.Minute {
		t.Errorf("skip: resources %q wait %v", r.Resources, r.ResourceWait)
	}
}
