package fleet

import (
	"context"
	"fmt"
	"time"

	"cronvisor/internal/base/durations"
)

// okSamplesSQL is each host's newest successful runs of each job of an
// array, at most $3 per job and host, of a slot (or start) after $2.
// The fleet's own newest runs of a job are among them: each host gives
// its newest.
const okSamplesSQL = `SELECT job, host, run_id, started_at, ended_at FROM (
	SELECT job, host, run_id, started_at, ended_at,
		row_number() OVER (PARTITION BY job, host ORDER BY at DESC, run_id DESC) AS n
	FROM cronvisor_runs
	WHERE job = ANY($1::text[]) AND outcome = 'ok' AND at > $2
		AND started_at IS NOT NULL AND ended_at IS NOT NULL) r
	WHERE n <= $3 ORDER BY job, ended_at DESC, host`

// OKSamples returns, per job, the newest successful runs of each host
// (at most limit a host), newest first, each of a slot (or start) after
// since (zero: any); Sample.Host says whose. Jobs without any are absent.
func (s *Store) OKSamples(ctx context.Context, jobs []string, since time.Time, limit int) (map[string][]durations.Sample, error) {
	var after int64
	if !since.IsZero() {
		after = since.UnixNano()
	}
	out := map[string][]durations.Sample{}
	rows, err := s.db.QueryContext(ctx, okSamplesSQL, jobs, after, limit)
	if noTable(err) {
		return out, nil // no host has shipped anything yet
	}
	if err != nil {
		return nil, fmt.Errorf("history backend: durations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var job, host, id string
		var started, ended int64
		if err := rows.Scan(&job, &host, &id, &started, &ended); err != nil {
			return nil, fmt.Errorf("history backend: durations: %w", err)
		}
		out[job] = append(out[job], durations.Sample{RunID: id, Host: host,
			Took: time.Duration(ended - started), Ended: time.Unix(0, ended)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history backend: durations: %w", err)
	}
	return out, nil
}
