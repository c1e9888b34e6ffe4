package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"cronvisor/internal/base/run"
)

// Summary is what a daemon starting needs of a job's history: for its
// status, the newest record's outcome and end and the start of its newest
// run (a skip after it has no start of its own); for catch_up, LastSlot
// as LastSlot returns it.
type Summary struct {
	Outcome   run.Outcome
	EndedAt   time.Time
	StartedAt time.Time
	LastSlot  time.Time
}

// Summaries returns each job's Summary in one statement; jobs without
// records are absent. A daemon starting with thousands of jobs reads
// these first, once: four scalar columns a job, usually from one row.
func (s *Store) Summaries(ctx context.Context, jobs []string) (map[string]Summary, error) {
	out := make(map[string]Summary, len(jobs))
	if len(jobs) == 0 {
		return out, nil
	}
	list, err := json.Marshal(jobs)
	if err != nil {
		return nil, fmt.Errorf("history: summaries: %w", err)
	}
	db, err := s.reader()
	if err != nil {
		return nil, err
	}
	// One connection of its own, whose page cache, filled by this walk
	// over every job's index entries, is handed back once it is done: a
	// resident daemon would otherwise keep it for nothing.
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("history: summaries: %w", err)
	}
	defer conn.Close()
	defer conn.ExecContext(ctx, "PRAGMA shrink_memory") // only memory is at stake: its error is moot
	rows, err := conn.QueryContext(ctx, summariesSQL, string(list))
	if err != nil {
		return nil, fmt.Errorf("history: summaries: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var job, outcome string
		var ended, started, slot sql.NullInt64
		if err := rows.Scan(&job, &outcome, &ended, &started, &slot); err != nil {
			return nil, fmt.Errorf("history: summaries: %w", err)
		}
		out[job] = Summary{Outcome: run.Outcome(outcome), EndedAt: FromNanos(ended),
			StartedAt: FromNanos(started), LastSlot: FromNanos(slot)}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history: summaries: %w", err)
	}
	return out, nil
}

// summariesSQL finds, per job of a JSON array, the row Query's order puts
// first with one walk of the runs_job_at index. That row usually answers
// all four: it started, and it is a scheduled fire. Only when it does not
// (a skip, a manual run) does the COALESCE or CASE, which SQLite evaluates
// lazily, walk further back for the newest row that started (as Query's
// order has it) or LastSlot's. A repeated name yields a row per
// repetition; the map keeps one.
const summariesSQL = `SELECT j.value, l.outcome, l.ended_at,
	COALESCE(l.started_at, (SELECT r.started_at FROM runs r
		WHERE r.job = j.value AND r.started_at IS NOT NULL
		ORDER BY r.at DESC, r.id DESC LIMIT 1)),
	CASE WHEN l.manual = 0 AND l.scheduled_at IS NOT NULL THEN l.scheduled_at
		ELSE (SELECT r.scheduled_at FROM runs r
			WHERE r.job = j.value AND r.manual = 0 AND r.scheduled_at IS NOT NULL
			ORDER BY r.at DESC, r.id DESC LIMIT 1) END
	FROM json_each(?) j JOIN runs l ON l.id =
		(SELECT r.id FROM runs r WHERE r.job = j.value ORDER BY r.at DESC, r.id DESC LIMIT 1)`
