package history

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"cronvisor/internal/base/durations"
)

// okSamplesSQL reads, per job of a JSON array, its newest successful runs
// with a start and an end, through the runs_job_outcome_at index
// (equality on job and outcome, a range on at), in one statement: a job
// without any costs one index seek, not a statement.
const okSamplesSQL = `SELECT j.value, r.run_id, r.host, r.started_at, r.ended_at
	FROM json_each(?1) j JOIN runs r ON r.id IN (
		SELECT id FROM runs WHERE job = j.value AND outcome = 'ok' AND at > ?2
			AND started_at IS NOT NULL AND ended_at IS NOT NULL
		ORDER BY at DESC, id DESC LIMIT ?3)
	ORDER BY j.key, r.at DESC, r.id DESC`

// OKSamples returns, per job, at most limit of its successful runs with a
// start and an end, newest first, each of a slot (or start) after since
// (zero: any); jobs without any are absent. It is the durations.Source of
// this host's history.
func (s *Store) OKSamples(ctx context.Context, jobs []string, since time.Time, limit int) (map[string][]durations.Sample, error) {
	out := map[string][]durations.Sample{}
	if len(jobs) == 0 {
		return out, nil
	}
	list, err := json.Marshal(jobs)
	if err != nil {
		return nil, fmt.Errorf("history: durations: %w", err)
	}
	var after int64
	if !since.IsZero() {
		after = since.UnixNano()
	}
	db, err := s.reader()
	if err != nil {
		return nil, err
	}
	// One connection of its own, whose page cache is handed back once
	// read: a status asks for a few jobs now and then, and a resident
	// daemon would keep the cache for nothing.
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("history: durations: %w", err)
	}
	defer conn.Close()
	defer conn.ExecContext(ctx, "PRAGMA shrink_memory") // only memory is at stake: its error is moot
	rows, err := conn.QueryContext(ctx, okSamplesSQL, string(list), after, limit)
	if err != nil {
		return nil, fmt.Errorf("history: durations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var job, id, host string
		var started, ended int64
		if err := rows.Scan(&job, &id, &host, &started, &ended); err != nil {
			return nil, fmt.Errorf("history: durations: %w", err)
		}
		out[job] = append(out[job], durations.Sample{RunID: id, Host: host,
			Took: time.Duration(ended - started), Ended: time.Unix(0, ended)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history: durations: %w", err)
	}
	return out, nil
}
