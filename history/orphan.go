package history

import (
	"context"
	"fmt"
	"time"

	"cronvisor/run"
)

// The two writes of recovering a dead supervisor's run. Each is one
// statement that is a no-op when the row is already as wanted, so that
// several supervisors recovering the same run at once (they share the
// database) leave it recorded once, and a run its supervisor closed
// before dying is never reopened or overwritten.
const (
	adoptSQL     = `INSERT OR IGNORE INTO runs (` + columns + `) ` + values
	interruptSQL = `UPDATE runs SET outcome = 'interrupted', ended_at = ?,
	exit_code = NULL, reason = ?, log_path = ? WHERE run_id = ? AND outcome = 'running'`
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

// Interrupt closes the run runID as interrupted, exit status unknown, if it
// is still open, and reports whether it did. logPath is the run's output
// log, "" if none.
func (s *Store) Interrupt(ctx context.Context, runID string, ended time.Time, reason, logPath string) (bool, error) {
	return s.exec(ctx, "interrupt "+runID, interruptSQL, Nanos(ended), reason, logPath, runID)
}

// exec runs one write statement on the writable database (opening or
// reopening it as Apply does) and reports whether it changed a row.
func (s *Store) exec(ctx context.Context, what, query string, a ...any) (bool, error) {
	h, err := s.writer()
	if err != nil {
		return false, err
	}
	res, err := h.db.ExecContext(ctx, query, a...)
	if err != nil {
		return false, fmt.Errorf("history: %s: %w", what, classify(err))
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// concludeSQL closes an open run with the end its keeper saw.
const concludeSQL = `UPDATE runs SET outcome = ?, ended_at = ?, exit_code = ?, reason = ?,
	log_path = ?, cpu_user_us = ?, cpu_system_us = ?, memory_peak_bytes = ?, oom_killed = ?
	WHERE run_id = ? AND outcome = 'running'`

// Conclude closes the run runID with what its keeper saw after its
// supervisor died (outcome, exit code, nil if unknown, end time, reason
// and what the run cost), if it is still open, and reports whether it did.
func (s *Store) Conclude(ctx context.Context, runID string, outcome run.Outcome, exitCode *int, ended time.Time, reason, logPath string, usage run.Usage) (bool, error) {
	var code any
	if exitCode != nil {
		code = *exitCode
	}
	a := append([]any{string(outcome), Nanos(ended), code, reason, logPath}, UsageArgs(usage)...)
	return s.exec(ctx, "conclude "+runID, concludeSQL, append(a, runID)...)
}
