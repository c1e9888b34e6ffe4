package history

import (
	"context"
	"cronvisor/run"
)

// endRetriesSQL appends a note to the reason of a run's final row, once:
// a no-op for an open row, or one that says it already.
const endRetriesSQL = `UPDATE runs SET reason = CASE WHEN reason = '' THEN ? ELSE reason || '; ' || ? END
	WHERE run_id = ? AND outcome <> 'running' AND instr(reason, ?) = 0`

// EndRetries records the run runID, the last attempt of a slot whose
// retries were cut short (a supervisor died during the backoff), as the
// slot's end: note, why no retry started, is added to its reason. It
// returns the row as it is now (zero when history has none) and whether
// it changed it; an open row is left alone.
func (s *Store) EndRetries(ctx context.Context, runID, note string) (run.Record, bool, error) {
	changed, err := s.exec(ctx, "end retries "+runID, endRetriesSQL, note, note, runID, note)
	if err != nil {
		return run.Record{}, false, err
	}
	recs, err := s.byRunID(ctx, []string{runID})
	if err != nil {
		return run.Record{}, false, err
	}
	return recs[runID], changed, nil
}
