package fleet

import (
	"context"
	"fmt"
	"time"
)

// Prune deletes the shared records older than before (by slot, else
// start, else end) and returns how many; a record still running is kept
// whatever its age. The shared history is bounded by keep_age only:
// keep_runs is each host's bound on its own store. The schedules'
// versions are pruned by the same bound (see pruneSchedules).
func (s *Store) Prune(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM cronvisor_runs WHERE at < $1 AND outcome <> 'running'`, before.UnixNano())
	if noTable(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("history backend: prune: %w", err)
	}
	if err := s.pruneSchedules(ctx, before); err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
