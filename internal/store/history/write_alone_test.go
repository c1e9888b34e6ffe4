package history

import (
	"database/sql"
	"errors"
	"testing"

	"cronvisor/internal/base/run"
)

// TestALoneWriteIsCommittedOnItsOwn: a batch of one write is made
// without a transaction of its own; each is committed when Apply
// returns, seen by another connection, and leaves no transaction open
// (that connection can write at once); a duplicate start is still
// ErrDuplicate, and a finish whose row is there still merges into it.
func TestALoneWriteIsCommittedOnItsOwn(t *testing.T) {
	s, path := openTemp(t)
	ctx := testCtx(t)
	other, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	outcome := func(id string) string {
		t.Helper()
		var o string
		if err := other.QueryRowContext(ctx, "SELECT outcome FROM runs WHERE run_id = ?", id).Scan(&o); err != nil {
			t.Fatalf("%s from another connection: %v", id, err)
		}
		return o
	}
	alone := func(w Write) error {
		t.Helper()
		errs := s.Apply(ctx, []Write{w})
		if len(errs) != 1 {
			t.Fatalf("Apply: %d errors for one write", len(errs))
		}
		return errs[0]
	}

	started := run.Record{Job: "a", RunID: "started", ScheduledAt: minute(1), StartedAt: minute(1), PID: 9}
	if err := alone(Write{Kind: WriteStart, Record: started}); err != nil {
		t.Fatal(err)
	}
	if o := outcome("started"); o != string(run.Running) {
		t.Errorf("started: outcome %q, want running", o)
	}
	if err := alone(Write{Kind: WriteStart, Record: started}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("the same start again: %v, want ErrDuplicate", err)
	}
	skip := run.Record{Job: "a", RunID: "skipped", ScheduledAt: minute(2), Reason: "overlap"}
	if err := alone(Write{Kind: WriteSkip, Record: skip}); err != nil {
		t.Fatal(err)
	}
	whole := run.Record{Job: "a", RunID: "whole", ScheduledAt: minute(3), StartedAt: minute(3), EndedAt: minute(4),
		Outcome: run.Failed, ExitCode: intp(2), PID: 10}
	if err := alone(Write{Kind: WriteFinish, Record: whole, noStart: true}); err != nil {
		t.Fatal(err)
	}
	end := started
	end.Outcome, end.EndedAt, end.ExitCode = run.OK, minute(2), intp(0)
	if err := alone(Write{Kind: WriteFinish, Record: end}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]run.Outcome{"started": run.OK, "skipped": run.Skipped, "whole": run.Failed} {
		if o := outcome(id); o != string(want) {
			t.Errorf("%s: outcome %q, want %q", id, o, want)
		}
	}
	if r := record(t, s, "started"); r.PID != 9 || !r.EndedAt.Equal(minute(2)) {
		t.Errorf("finished over its start: %+v, want the start's pid and the end's time", r)
	}
	// busy_timeout 0: a transaction left open by s would make this fail
	// at once with SQLITE_BUSY.
	if _, err := other.ExecContext(ctx, "INSERT INTO runs (run_id, job, outcome, at) VALUES ('x', 'b', 'ok', 1)"); err != nil {
		t.Errorf("another connection's write after the lone writes: %v", err)
	}
}
