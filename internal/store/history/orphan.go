package history

import (
	"context"
	"fmt"

	"cronvisor/internal/base/run"
)

// The writes of recovering a dead supervisor's run. Each is one statement
// that is a no-op when the row is already as wanted, so that several
// supervisors recovering the same run at once (they share the database)
// leave it recorded once, and a run its supervisor closed before dying is
// never reopened or overwritten.
const (
	adoptSQL = `INSERT OR IGNORE INTO runs (` + columns + `) ` + values
	// concludeSQL closes an open run with the end its keeper saw, or as
	// interrupted when nobody saw it. A start row rebuilt without the
	// run's start and pid (its supervisor died before it knew them) gets
	// them from the end, which its keeper found them for.
	concludeSQL = `UPDATE runs SET outcome = ?, ended_at = ?, exit_code = ?, reason = ?,
	log_path = ?, cpu_user_us = ?, cpu_system_us = ?, memory_peak_bytes = ?, oom_killed = ?,
	progress = CASE WHEN ? = '' THEN progress ELSE ? END,
	started_at = COALESCE(started_at, ?), pid = COALESCE(NULLIF(pid, 0), ?)
	WHERE run_id = ? AND outcome = 'running'`
	// amendSQL restates a final row's reason, once.
	amendSQL = `UPDATE runs SET reason = ? WHERE run_id = ? AND outcome <> 'running' AND reason <> ?`
)

// Adopt records r as an open run (outcome "running") unless its run id is
// already recorded, and reports whether it inserted the row. It rebuilds
// the start of a run whose supervisor died before its own start row was
// committed.
func (s *Store) Adopt(ctx context.Context, r run.Record) (bool, error) {
	r.Outcome = run.Running
	if err := check(r); err != nil {
		return false, err
	}
	return s.exec(ctx, "adopt "+r.Job+"/"+r.RunID, adoptSQL, args(r)...)
}

// WriteEnd records the end of a run that its supervisor left open when it
// died: what its keeper saw (outcome, exit code, nil if unknown, end time,
// reason, log and what the run cost), or interrupted when nobody saw it.
// An Amends end restates the reason of a final row (a slot whose retries
// were cut short). closed reports that this call changed the row: false
// when it is recorded so already, by its supervisor or another recoverer.
// It is an ending.Writer: call it through ending.Path.
func (s *Store) WriteEnd(ctx context.Context, e run.End) (closed bool, err error) {
	if e.Amends {
		return s.exec(ctx, "amend "+e.RunID, amendSQL, e.Reason, e.RunID, e.Reason)
	}
	var code any
	if e.ExitCode != nil {
		code = *e.ExitCode
	}
	a := append([]any{string(e.Outcome), Nanos(e.Ended), code, e.Reason, e.LogPath}, UsageArgs(e.Usage)...)
	return s.exec(ctx, "conclude "+e.RunID, concludeSQL, append(a, e.Progress, e.Progress, Nanos(e.Started), e.PID, e.RunID)...)
}

// Record returns the row of runID, if history has it.
func (s *Store) Record(ctx context.Context, runID string) (run.Record, bool, error) {
	recs, err := s.byRunID(ctx, []string{runID})
	if err != nil {
		return run.Record{}, false, err
	}
	r, ok := recs[runID]
	return r, ok, nil
}

// exec runs one write statement on the writable database (opening or
// reopening it as Apply does) and reports whether it changed a row.
func (s *Store) exec(ctx context.Context, what, query string, a ...any) (bool, error) {
	h, done, err := s.writer()
	if err != nil {
		return false, err
	}
	res, err := h.db.ExecContext(ctx, query, a...)
	done()
	if err != nil {
		return false, fmt.Errorf("history: %s: %w", what, classify(err))
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
