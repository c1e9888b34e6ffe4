package history

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

func TestStoreRoundTrip(t *testing.T) {
	s, _ := openTemp(t)
	ctx := testCtx(t)
	for _, tc := range outcomeCases() {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.rec
			if tc.starts {
				open := r
				open.EndedAt, open.ExitCode, open.Reason, open.Usage = time.Time{}, nil, "", run.Usage{}
				if err := s.Start(ctx, open); err != nil {
					t.Fatalf("Start: %v", err)
				}
				// Finish names only what it learned; Start's fields stay.
				open.Progress = ""
				done := run.Record{RunID: r.RunID, Outcome: r.Outcome, EndedAt: r.EndedAt,
					ExitCode: r.ExitCode, Reason: r.Reason, Usage: r.Usage, Progress: r.Progress}
				if err := s.Finish(ctx, done); err != nil {
					t.Fatalf("Finish: %v", err)
				}
			} else if err := s.Skip(ctx, r); err != nil {
				t.Fatalf("Skip: %v", err)
			}
			got, err := s.Query(ctx, Filter{Job: r.Job, Outcomes: []run.Outcome{r.Outcome}})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("Query found %d records, want 1", len(got))
			}
			sameRecord(t, got[0], r)
			b, err := json.Marshal(got[0])
			if err != nil {
				t.Fatal(err)
			}
			checkJSON(t, b, r)
		})
	}
}

func TestStartFinish(t *testing.T) {
	s, _ := openTemp(t)
	ctx := testCtx(t)
	open := run.Record{Job: "a", RunID: "r1", ScheduledAt: minute(0), StartedAt: minute(0),
		LogPath: "/l/r1.log", Host: "h", SupervisorPID: 1, PID: 2}
	if err := s.Start(ctx, open); err != nil {
		t.Fatal(err)
	}
	t.Run("open run listed", func(t *testing.T) {
		got, err := s.OpenRuns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := open
		want.Outcome = run.Running
		if len(got) != 1 {
			t.Fatalf("OpenRuns = %v", runIDs(got))
		}
		sameRecord(t, got[0], want)
	})
	t.Run("second start refused", func(t *testing.T) {
		if err := s.Start(ctx, open); err == nil {
			t.Error("Start of a known run id succeeded")
		}
	})
	t.Run("finish closes it", func(t *testing.T) {
		if err := s.Finish(ctx, run.Record{RunID: "r1", Outcome: run.OK, EndedAt: minute(1), ExitCode: intp(0)}); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.OpenRuns(ctx); len(got) != 0 {
			t.Errorf("OpenRuns after Finish = %v", runIDs(got))
		}
	})
	t.Run("finish without start inserts", func(t *testing.T) {
		r := run.Record{Job: "a", RunID: "r2", Outcome: run.Interrupted, ScheduledAt: minute(2), Reason: "x"}
		if err := s.Finish(ctx, r); err != nil {
			t.Fatal(err)
		}
		got, _ := s.Query(ctx, Filter{Outcomes: []run.Outcome{run.Interrupted}})
		if len(got) != 1 {
			t.Fatalf("got %v", runIDs(got))
		}
		sameRecord(t, got[0], r)
	})
}

func TestBadRecords(t *testing.T) {
	s, _ := openTemp(t)
	ctx := testCtx(t)
	ok := run.Record{Job: "a", RunID: "r", Outcome: run.OK, ScheduledAt: minute(0)}
	tests := []struct {
		name string
		call func(run.Record) error
		mod  func(*run.Record)
	}{
		{"finish running", func(r run.Record) error { return s.Finish(ctx, r) }, func(r *run.Record) { r.Outcome = run.Running }},
		{"finish unknown outcome", func(r run.Record) error { return s.Finish(ctx, r) }, func(r *run.Record) { r.Outcome = "great" }},
		{"finish new without job", func(r run.Record) error { return s.Finish(ctx, r) }, func(r *run.Record) { r.Job = "" }},
		{"skip running", func(r run.Record) error { return s.Skip(ctx, r) }, func(r *run.Record) { r.Outcome = run.Running }},
		{"skip without run id", func(r run.Record) error { return s.Skip(ctx, r) }, func(r *run.Record) { r.RunID = "" }},
		{"start without time", func(r run.Record) error { return s.Start(ctx, r) }, func(r *run.Record) { r.ScheduledAt = time.Time{} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := ok
			tc.mod(&r)
			if err := tc.call(r); !errors.Is(err, ErrBadRecord) {
				t.Errorf("err = %v, want ErrBadRecord", err)
			}
		})
	}
}

func TestQueryFilters(t *testing.T) {
	s, _ := openTemp(t)
	ctx := testCtx(t)
	fix := []run.Record{
		{Job: "a", RunID: "a1", Outcome: run.OK, ScheduledAt: minute(0)},
		{Job: "a", RunID: "a2", Outcome: run.Skipped, ScheduledAt: minute(1)},
		{Job: "b", RunID: "b1", Outcome: run.Failed, ScheduledAt: minute(2)},
		{Job: "a", RunID: "a3", Outcome: run.Failed, ScheduledAt: minute(3)},
		{Job: "b", RunID: "b2", Outcome: run.Skipped, StartedAt: minute(4)}, // no slot: sorts by start
	}
	for _, r := range fix {
		mustSkip(t, s, r)
	}
	tests := []struct {
		name string
		f    Filter
		want []string
	}{
		{"all newest first", Filter{}, []string{"b2", "a3", "b1", "a2", "a1"}},
		{"job", Filter{Job: "a"}, []string{"a3", "a2", "a1"}},
		{"one outcome", Filter{Outcomes: []run.Outcome{run.Skipped}}, []string{"b2", "a2"}},
		{"two outcomes of a job", Filter{Job: "a", Outcomes: []run.Outcome{run.OK, run.Skipped}}, []string{"a2", "a1"}},
		{"since", Filter{Since: minute(2)}, []string{"b2", "a3", "b1"}},
		{"before pages back", Filter{Before: minute(3), Limit: 2}, []string{"b1", "a2"}},
		{"limit", Filter{Limit: 1}, []string{"b2"}},
		{"nothing", Filter{Job: "zzz"}, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Query(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if ids := runIDs(got); !reflect.DeepEqual(ids, tc.want) {
				t.Errorf("Query(%+v) = %v, want %v", tc.f, ids, tc.want)
			}
			var each []run.Record
			if err := s.Each(ctx, tc.f, func(r run.Record) error { each = append(each, r); return nil }); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(each, got) && len(got) > 0 {
				t.Errorf("Each(%+v) = %v, want Query's %v", tc.f, runIDs(each), runIDs(got))
			}
		})
	}
	// An error of the callback stops the reading and comes back.
	stop := errors.New("enough")
	n := 0
	if err := s.Each(ctx, Filter{}, func(run.Record) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("Each with a failing callback: %v after %d records, want %v after 1", err, n, stop)
	}
}

func TestSlots(t *testing.T) {
	s, _ := openTemp(t)
	ctx := testCtx(t)
	for _, r := range []run.Record{
		{Job: "a", RunID: "1", Outcome: run.OK, ScheduledAt: minute(0)},
		{Job: "a", RunID: "2", Outcome: run.Failed, ScheduledAt: minute(5)},
		{Job: "a", RunID: "3", Outcome: run.Skipped, ScheduledAt: minute(10)},
		{Job: "a", RunID: "4", Outcome: run.OK, ScheduledAt: minute(12), Manual: true},
		{Job: "b", RunID: "5", Outcome: run.OK, ScheduledAt: minute(1), Manual: true},
		{Job: "c", RunID: "6", Outcome: run.Error, StartedAt: minute(1)}, // no slot
	} {
		mustSkip(t, s, r)
	}
	tests := []struct {
		name        string
		job         string
		lastOK, any time.Time
	}{
		{"ok, failed, skipped, manual ok", "a", minute(12), minute(10)},
		{"only manual", "b", minute(1), time.Time{}},
		{"no slot", "c", time.Time{}, time.Time{}},
		{"unknown job", "zzz", time.Time{}, time.Time{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, err := s.LastOKSlot(ctx, tc.job)
			if err != nil || !ok.Equal(tc.lastOK) {
				t.Errorf("LastOKSlot = %v, %v; want %v", ok, err, tc.lastOK)
			}
			last, err := s.LastSlot(ctx, tc.job)
			if err != nil || !last.Equal(tc.any) {
				t.Errorf("LastSlot = %v, %v; want %v", last, err, tc.any)
			}
		})
	}
}

func TestOpenReadOnly(t *testing.T) {
	dir := t.TempDir()
	t.Run("missing file", func(t *testing.T) {
		_, err := OpenReadOnly(filepath.Join(dir, "none.db"))
		if !errors.Is(err, ErrNoHistory) {
			t.Errorf("err = %v, want ErrNoHistory", err)
		}
		if _, serr := os.Stat(filepath.Join(dir, "none.db")); !errors.Is(serr, os.ErrNotExist) {
			t.Errorf("OpenReadOnly created the file: %v", serr)
		}
	})
	p := filepath.Join(dir, "history.db")
	w, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	mustSkip(t, w, run.Record{Job: "a", RunID: "1", ScheduledAt: minute(0)})
	t.Run("reads beside a writer", func(t *testing.T) {
		ro, err := OpenReadOnly(p)
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		mustSkip(t, w, run.Record{Job: "a", RunID: "2", ScheduledAt: minute(1)})
		got, err := ro.Query(testCtx(t), Filter{})
		if ids := runIDs(got); err != nil || !reflect.DeepEqual(ids, []string{"2", "1"}) {
			t.Errorf("Query = %v, %v", ids, err)
		}
	})
	t.Run("unmigrated file", func(t *testing.T) {
		empty := filepath.Join(dir, "empty.db")
		if err := os.WriteFile(empty, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenReadOnly(empty); !errors.Is(err, ErrSchema) {
			t.Errorf("err = %v, want ErrSchema", err)
		}
	})
}

func TestSchemaTooNew(t *testing.T) {
	s, p := openTemp(t)
	if _, err := s.h.Load().db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for name, open := range map[string]func(string) (*Store, error){"Open": func(p string) (*Store, error) { return Open(p) }, "OpenReadOnly": OpenReadOnly} {
		t.Run(name, func(t *testing.T) {
			if _, err := open(p); !errors.Is(err, ErrSchema) {
				t.Errorf("err = %v, want ErrSchema", err)
			}
		})
	}
}

func TestOpenMigratesOnce(t *testing.T) {
	s, p := openTemp(t)
	mustSkip(t, s, run.Record{Job: "a", RunID: "1", ScheduledAt: minute(0)})
	s.Close()
	s2, err := Open(p)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s2.Close()
	got, err := s2.Query(testCtx(t), Filter{})
	if err != nil || len(got) != 1 {
		t.Errorf("after reopen: %v, %v", runIDs(got), err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("database mode = %v, %v; want 0600", fi.Mode(), err)
	}
}

// TestSkipsQueryUsesIndex checks the plan of "skips of job X in the last
// 24 h", the query the overlap view runs most, and of the other common
// filters. The store has no ANALYZE statistics, like a real one, so the
// planner picks by the shape of the query alone.
func TestSkipsQueryUsesIndex(t *testing.T) {
	s, _ := openTemp(t)
	query := func(f Filter) func() (string, []any) { return func() (string, []any) { return buildQuery(f) } }
	slot := func(q string) func() (string, []any) { return func() (string, []any) { return q, []any{"j1"} } }
	tests := []struct {
		name  string
		query func() (string, []any)
		index string
	}{
		{"skips of a job since", query(Filter{Job: "j1", Outcomes: []run.Outcome{run.Skipped}, Since: minute(0)}), "runs_job_outcome_at"},
		{"a job", query(Filter{Job: "j1", Limit: 20}), "runs_job_at"},
		{"open runs", query(Filter{Outcomes: []run.Outcome{run.Running}}), "runs_outcome_at"},
		{"everything", query(Filter{Limit: 20}), "runs_at"},
		{"last ok slot", slot(lastOKSlotSQL), "runs_job_outcome_at"},
		{"last slot", slot(lastSlotSQL), "runs_job_at"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, a := tc.query()
			rows, err := s.h.Load().db.Query("EXPLAIN QUERY PLAN "+q, a...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, notused int
				var detail string
				if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			p := strings.Join(plan, "; ")
			if !strings.Contains(p, "INDEX "+tc.index) || strings.Contains(p, "TEMP B-TREE") {
				t.Errorf("plan %q: want index %s and no sort", p, tc.index)
			}
		})
	}
}

func TestApplyBatch(t *testing.T) {
	s, _ := openTemp(t)
	ctx := testCtx(t)
	if err := s.Start(ctx, run.Record{Job: "a", RunID: "old", ScheduledAt: minute(0)}); err != nil {
		t.Fatal(err)
	}
	writes := []Write{
		{Kind: WriteStart, Record: run.Record{Job: "a", RunID: "r1", ScheduledAt: minute(1), StartedAt: minute(1)}},
		{Kind: WriteStart, Record: run.Record{Job: "a", RunID: "old", ScheduledAt: minute(1)}}, // already recorded
		{Kind: WriteSkip, Record: run.Record{Job: "", RunID: "bad", ScheduledAt: minute(1)}},   // no job
		{Kind: WriteSkip, Record: run.Record{Job: "b", RunID: "s1", ScheduledAt: minute(1), Reason: "held"}},
		{Kind: WriteFinish, Record: run.Record{RunID: "r1", Outcome: run.OK, EndedAt: minute(2), ExitCode: intp(0)}},
		{Kind: WriteFinish, Record: run.Record{RunID: "r1", Outcome: run.Running}}, // not a final outcome
	}
	errs := s.Apply(ctx, writes)
	for i, wantErr := range []bool{false, true, true, false, false, true} {
		if (errs[i] != nil) != wantErr {
			t.Errorf("write %d: err %v, want an error: %v", i, errs[i], wantErr)
		}
	}
	got, err := s.Query(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]run.Outcome{}
	for _, r := range got {
		outcomes[r.RunID] = r.Outcome
	}
	want := map[string]run.Outcome{"old": run.Running, "r1": run.OK, "s1": run.Skipped}
	if !reflect.DeepEqual(outcomes, want) {
		t.Errorf("after the batch: %v, want %v", outcomes, want)
	}
}
