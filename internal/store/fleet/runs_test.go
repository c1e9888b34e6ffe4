package fleet

import (
	"context"
	"slices"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/store/history"
)

// base is the tests' reference instant.
func base() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) }

func minute(m int) time.Time { return base().Add(time.Duration(m) * time.Minute) }

func ctxOf(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// rec is a record of job j, run id, host and outcome at minute m; ended
// outcomes end a minute later.
func rec(job, id, host string, o run.Outcome, m int) run.Record {
	r := run.Record{Job: job, RunID: id, Host: host, Outcome: o, ScheduledAt: minute(m), StartedAt: minute(m), Attempt: 1}
	if o != run.Running {
		r.EndedAt = minute(m + 1)
		c := 0
		r.ExitCode = &c
	}
	return r
}

// The upsert is idempotent by run id, and an ended record is never undone
// by a running one, nor by another host's ending, but a peer's guess that
// the host was lost gives way to the host's own record.
func TestUpsert(t *testing.T) {
	lost := rec("j", "r1", "a", run.Interrupted, 0)
	lost.Reason, lost.ExitCode = "host lost (no heartbeat for 45s)", nil
	noted := rec("j", "r1", "a", run.Failed, 0)
	noted.Reason = "retries cut short"
	cases := []struct {
		name       string
		writes     []run.Record
		want       run.Outcome
		wantReason string
	}{
		{"same record twice", []run.Record{rec("j", "r1", "a", run.OK, 0), rec("j", "r1", "a", run.OK, 0)}, run.OK, ""},
		{"running then ok", []run.Record{rec("j", "r1", "a", run.Running, 0), rec("j", "r1", "a", run.OK, 0)}, run.OK, ""},
		{"ok then running", []run.Record{rec("j", "r1", "a", run.OK, 0), rec("j", "r1", "a", run.Running, 0)}, run.OK, ""},
		{"host lost then the host's own ok", []run.Record{rec("j", "r1", "a", run.Running, 0), lost, rec("j", "r1", "a", run.OK, 0)}, run.OK, ""},
		{"ok then another host's failure", []run.Record{rec("j", "r1", "a", run.OK, 0), rec("j", "r1", "b", run.Failed, 0)}, run.OK, ""},
		{"ok then a peer's host lost", []run.Record{rec("j", "r1", "a", run.OK, 0), lost}, run.OK, ""},
		{"the host's note on its own ending", []run.Record{rec("j", "r1", "a", run.Failed, 0), noted}, run.Failed, "retries cut short"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url, db := newDB(t)
			s := openStore(t, url, "a")
			for _, w := range tc.writes {
				if err := s.Upsert(ctxOf(t), []run.Record{w}); err != nil {
					t.Fatalf("Upsert: %v", err)
				}
			}
			var n int
			var outcome, reason string
			err := db.QueryRowContext(ctxOf(t), `SELECT count(*), max(outcome), max(reason) FROM cronvisor_runs`).Scan(&n, &outcome, &reason)
			if err != nil || n != 1 || run.Outcome(outcome) != tc.want || reason != tc.wantReason {
				t.Errorf("rows %d, outcome %q, reason %q (%v); want 1, %q, %q", n, outcome, reason, err, tc.want, tc.wantReason)
			}
		})
	}
}

// A record reads back as it was written; one without a host gets the
// store's.
func TestUpsertRoundTrip(t *testing.T) {
	url, _ := newDB(t)
	s := openStore(t, url, "host-b")
	r := rec("j", "r1", "", run.Skipped, 3)
	r.StartedAt, r.EndedAt, r.ExitCode = time.Time{}, time.Time{}, nil
	r.Reason, r.Manual, r.Attempt = "lock held", true, 2
	r.Holder = &run.Holder{PID: 42, Host: "host-a", Job: "j", RunID: "r0", Since: minute(2)}
	if err := s.Upsert(ctxOf(t), []run.Record{r}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Query(ctxOf(t), history.Filter{})
	if err != nil || len(got) != 1 {
		t.Fatalf("Query = %v, %v", got, err)
	}
	r.Host = "host-b"
	g := got[0]
	if g.RunID != r.RunID || g.Host != r.Host || g.Reason != r.Reason || !g.ScheduledAt.Equal(r.ScheduledAt) ||
		!g.StartedAt.IsZero() || g.ExitCode != nil || !g.Manual || g.Attempt != 2 ||
		g.Holder == nil || *g.Holder != (run.Holder{PID: 42, Host: "host-a", Job: "j", RunID: "r0", Since: minute(2).Local()}) {
		t.Errorf("read back %+v (holder %+v), want %+v", g, g.Holder, r)
	}
}

// Query filters and orders as history.Store.Query does.
func TestQuery(t *testing.T) {
	url, _ := newDB(t)
	s := openStore(t, url, "a")
	skip := rec("k", "r4", "b", run.Skipped, 4)
	skip.ScheduledAt = time.Time{} // sorts by its start
	recs := []run.Record{rec("j", "r1", "a", run.OK, 1), rec("j", "r2", "b", run.Failed, 2),
		rec("k", "r3", "a", run.OK, 3), skip, rec("j", "r5", "b", run.Running, 5)}
	if err := s.Upsert(ctxOf(t), recs); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		f    history.Filter
		want []string
	}{
		{"all, newest first", history.Filter{}, []string{"r5", "r4", "r3", "r2", "r1"}},
		{"one job", history.Filter{Job: "j"}, []string{"r5", "r2", "r1"}},
		{"outcomes", history.Filter{Outcomes: []run.Outcome{run.OK, run.Skipped}}, []string{"r4", "r3", "r1"}},
		{"since", history.Filter{Since: minute(3)}, []string{"r5", "r4", "r3"}},
		{"before", history.Filter{Before: minute(3)}, []string{"r2", "r1"}},
		{"limit", history.Filter{Limit: 2}, []string{"r5", "r4"}},
		{"all of it", history.Filter{Job: "j", Outcomes: []run.Outcome{run.OK, run.Failed}, Since: minute(2), Limit: 5}, []string{"r2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Query(ctxOf(t), tc.f)
			if err != nil {
				t.Fatal(err)
			}
			ids := []string{}
			for _, r := range got {
				ids = append(ids, r.RunID)
			}
			if !slices.Equal(ids, tc.want) {
				t.Errorf("run ids %v, want %v", ids, tc.want)
			}
		})
	}
}

// Summaries is each job's newest outcome, start and scheduled slot,
// whichever host recorded them.
func TestSummaries(t *testing.T) {
	url, _ := newDB(t)
	s := openStore(t, url, "a")
	if got, err := s.Summaries(ctxOf(t), []string{"j"}); err != nil || len(got) != 0 {
		t.Fatalf("before any record: %v, %v; want none", got, err)
	}
	manual := rec("j", "r3", "a", run.OK, 3)
	manual.Manual = true
	skip := rec("j", "r4", "b", run.Skipped, 4)
	skip.StartedAt, skip.EndedAt = time.Time{}, minute(4)
	if err := s.Upsert(ctxOf(t), []run.Record{rec("j", "r1", "a", run.OK, 1), rec("j", "r2", "b", run.Failed, 2), manual, skip}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Summaries(ctxOf(t), []string{"j", "none"})
	if err != nil {
		t.Fatal(err)
	}
	want := history.Summary{Outcome: run.Skipped, EndedAt: minute(4), StartedAt: minute(3), LastSlot: minute(4)}
	g := got["j"]
	if len(got) != 1 || g.Outcome != want.Outcome || !g.EndedAt.Equal(want.EndedAt) || !g.StartedAt.Equal(want.StartedAt) || !g.LastSlot.Equal(want.LastSlot) {
		t.Errorf("Summaries = %+v, want j: %+v", got, want)
	}
}

// Oldest is where the shared history begins: zero before any host has
// shipped (no table yet), then the oldest record of any host and job.
func TestOldest(t *testing.T) {
	url, _ := newDB(t)
	s := openStore(t, url, "a")
	if at, err := s.Oldest(ctxOf(t)); err != nil || !at.IsZero() {
		t.Fatalf("before any record: %v, %v; want zero, nil", at, err)
	}
	recs := []run.Record{rec("j", "r2", "a", run.OK, 2), rec("k", "r1", "b", run.Skipped, 1), rec("j", "r3", "b", run.OK, 3)}
	if err := s.EnsureSchema(ctxOf(t)); err != nil {
		t.Fatal(err)
	}
	if err := s.Upsert(ctxOf(t), recs); err != nil {
		t.Fatal(err)
	}
	at, err := s.Oldest(ctxOf(t))
	if err != nil || !at.Equal(sortTime(recs[1])) {
		t.Errorf("oldest %v, %v; want %v (host b's skip of job k)", at, err, sortTime(recs[1]))
	}
}

// Prune deletes the records older than its bound, of every host, and
// keeps a running one whatever its age.
func TestPrune(t *testing.T) {
	url, _ := newDB(t)
	s := openStore(t, url, "a")
	recs := []run.Record{rec("j", "old", "a", run.OK, 1), rec("j", "old-b", "b", run.Skipped, 2),
		rec("j", "old-running", "b", run.Running, 2), rec("j", "new", "a", run.OK, 5)}
	if err := s.Upsert(ctxOf(t), recs); err != nil {
		t.Fatal(err)
	}
	n, err := s.Prune(ctxOf(t), minute(3))
	if err != nil || n != 2 {
		t.Fatalf("pruned %d, %v; want 2, nil", n, err)
	}
	got, err := s.Query(ctxOf(t), history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.RunID)
	}
	if !slices.Equal(ids, []string{"new", "old-running"}) {
		t.Errorf("left %v, want [new old-running]", ids)
	}
}
