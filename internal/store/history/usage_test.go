package history

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// TestUsageMigratesAnOldDatabase: a database of the three migrations
// before the cost columns opens, its rows read as not measured, and a run
// ended afterwards keeps its cost to the microsecond.
func TestUsageMigratesAnOldDatabase(t *testing.T) {
	ctx := testCtx(t)
	s, _ := openOld(t, 3)
	measured := run.Usage{Measured: true, CPUUser: 520123 * time.Microsecond, CPUSystem: 31 * time.Microsecond,
		MemoryPeak: 120 << 20, OOMKilled: true}
	if err := s.Start(ctx, run.Record{Job: "a", RunID: "new", StartedAt: minute(1)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(ctx, run.Record{RunID: "new", Outcome: run.Failed, EndedAt: minute(2), Usage: measured}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Query(ctx, Filter{Job: "a"})
	if err != nil || len(got) != 2 {
		t.Fatalf("Query = %d records, %v; want 2", len(got), err)
	}
	for _, r := range got {
		want := map[string]run.Usage{"old": {}, "new": measured}[r.RunID]
		if r.Usage != want {
			t.Errorf("%s: usage %+v, want %+v", r.RunID, r.Usage, want)
		}
	}
}

// openOld opens a store made by the first version migrations, with one
// run, "old" of job a, written by that version.
func openOld(t *testing.T, version int) (*Store, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "history.db")
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range append(migrations[:version:version], fmt.Sprintf("PRAGMA user_version = %d", version),
		`INSERT INTO runs (run_id, job, outcome, at, started_at, ended_at, exit_code)
			VALUES ('old', 'a', 'ok', 1, 1, 2, 0)`) {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	db.Close()
	s, err := Open(p)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, p
}

// TestUsageOfAConcludedRun: a run its keeper saw to the end keeps the
// cost the keeper read; one closed without (an operator's kill of an
// adopted run) reads as not measured.
func TestUsageOfAConcludedRun(t *testing.T) {
	ctx := testCtx(t)
	for _, tc := range []struct {
		name  string
		usage run.Usage
	}{
		{"measured", run.Usage{Measured: true, CPUUser: 2 * time.Second, CPUSystem: time.Millisecond}},
		{"not measured", run.Usage{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTemp(t)
			if err := s.Start(ctx, run.Record{Job: "a", RunID: "r1", StartedAt: minute(1)}); err != nil {
				t.Fatal(err)
			}
			if ok, err := s.WriteEnd(ctx, run.End{RunID: "r1", Outcome: run.OK, ExitCode: intp(0), Ended: minute(2), Usage: tc.usage}); !ok || err != nil {
				t.Fatalf("WriteEnd = %v, %v", ok, err)
			}
			got, err := s.Query(ctx, Filter{Job: "a"})
			if err != nil || len(got) != 1 {
				t.Fatalf("Query = %d records, %v; want 1", len(got), err)
			}
			if got[0].Usage != tc.usage {
				t.Errorf("usage %+v, want %+v", got[0].Usage, tc.usage)
			}
		})
	}
}

// TestWriterRecordsUsage: the End the runner reports carries its cost
// into the record.
func TestWriterRecordsUsage(t *testing.T) {
	slot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		usage run.Usage
	}{
		{"measured", run.Usage{Measured: true, CPUUser: 520 * time.Millisecond, CPUSystem: 30 * time.Millisecond, MemoryPeak: 4096}},
		{"not measured", run.Usage{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, store, _ := newTestWriter(t)
			j.Started(run.Start{Job: "job", RunID: "r1", Slot: slot, Started: slot, PID: 42})
			if err := j.finished(run.End{Job: "job", RunID: "r1", Slot: slot, Started: slot, Ended: slot.Add(time.Second),
				PID: 42, Outcome: run.OK, ExitCode: intp(0), Usage: tc.usage}); err != nil {
				t.Fatal(err)
			}
			if got := record(t, store, "r1").Usage; got != tc.usage {
				t.Errorf("usage %+v, want %+v", got, tc.usage)
			}
		})
	}
}
