package fleet

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"cronvisor/internal/store/history"
)

// Oldest is the time of the fleet's oldest record, any job, any host
// (zero when there is none): where the shared history begins, which is
// as far back as audit can judge.
func (s *Store) Oldest(ctx context.Context) (time.Time, error) {
	var at sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT MIN(at) FROM cronvisor_runs`).Scan(&at)
	if noTable(err) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("history backend: oldest record: %w", err)
	}
	return history.FromNanos(at), nil
}
