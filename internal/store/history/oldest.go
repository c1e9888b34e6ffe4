package history

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Oldest is the time of the store's oldest record, of any job: its slot,
// else its start, else its end (what Query sorts by). It is when the
// history began, before which `audit` judges no slot. Zero when the store
// holds no record.
func (s *Store) Oldest(ctx context.Context) (time.Time, error) {
	db, err := s.reader()
	if err != nil {
		return time.Time{}, err
	}
	var n sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT MIN(at) FROM runs`).Scan(&n); err != nil {
		return time.Time{}, fmt.Errorf("history: oldest record: %w", err)
	}
	return FromNanos(n), nil
}
