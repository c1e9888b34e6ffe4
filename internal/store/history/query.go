package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"cronvisor/internal/base/run"
)

// Filter selects records. Zero fields do not filter.
type Filter struct {
	Job      string
	Outcomes []run.Outcome // any of these
	Since    time.Time     // at or after
	// Before pages back: only records strictly older than it. Pass the
	// time of the last record of the previous page; records sharing that
	// exact nanosecond are the only ones a page boundary can drop.
	Before time.Time
	Limit  int // 0: no limit
}

// Query returns the records that match f, newest first. Records sort and
// filter by their slot (ScheduledAt), else StartedAt, else EndedAt; ties go
// newest-inserted first.
func (s *Store) Query(ctx context.Context, f Filter) ([]run.Record, error) {
	var out []run.Record
	if err := s.Each(ctx, f, func(r run.Record) error { out = append(out, r); return nil }); err != nil {
		return nil, err
	}
	return out, nil
}

// Each calls fn with each record that matches f, in Query's order, as it
// reads them: memory stays that of one record however many match, for
// `history --limit 0 --json` over a large history. An error of fn stops
// the reading and is returned.
func (s *Store) Each(ctx context.Context, f Filter, fn func(run.Record) error) error {
	q, a := buildQuery(f)
	db, err := s.reader()
	if err != nil {
		return err
	}
	rows, err := db.QueryContext(ctx, q, a...)
	if err != nil {
		return fmt.Errorf("history: query: %w", err)
	}
	return eachRow(rows, fn)
}

// buildQuery writes f as SQL whose WHERE clause matches one of the indexes:
// equality on job and outcome, a range on at, ordered by at. extra are
// further conditions without arguments.
func buildQuery(f Filter, extra ...string) (string, []any) {
	where := append([]string(nil), extra...)
	var a []any
	if f.Job != "" {
		where, a = append(where, "job = ?"), append(a, f.Job)
	}
	switch len(f.Outcomes) {
	case 0:
	case 1:
		where, a = append(where, "outcome = ?"), append(a, string(f.Outcomes[0]))
	default:
		where = append(where, "outcome IN (?"+strings.Repeat(",?", len(f.Outcomes)-1)+")")
		for _, o := range f.Outcomes {
			a = append(a, string(o))
		}
	}
	if !f.Since.IsZero() {
		where, a = append(where, "at >= ?"), append(a, f.Since.UnixNano())
	}
	if !f.Before.IsZero() {
		where, a = append(where, "at < ?"), append(a, f.Before.UnixNano())
	}
	q := "SELECT id, " + columns + " FROM runs"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY at DESC, id DESC"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	return q, a
}

// OpenRuns returns the rows still "running": runs in flight, or runs of a
// supervisor that died; telling which is the caller's business (Host,
// SupervisorPID).
func (s *Store) OpenRuns(ctx context.Context) ([]run.Record, error) {
	return s.Query(ctx, Filter{Outcomes: []run.Outcome{run.Running}})
}

// LastOKSlot is the slot of the job's latest successful run, manual ones
// included (their slot is their start); zero if none.
func (s *Store) LastOKSlot(ctx context.Context, job string) (time.Time, error) {
	return s.slot(ctx, lastOKSlotSQL, job)
}

const lastOKSlotSQL = `SELECT scheduled_at FROM runs
	WHERE job = ? AND outcome = 'ok' AND scheduled_at IS NOT NULL
	ORDER BY at DESC, id DESC LIMIT 1`

// LastSlot is the latest slot of any scheduled fire of the job, whether it
// ran or was skipped; manual runs do not count. Zero if none.
func (s *Store) LastSlot(ctx context.Context, job string) (time.Time, error) {
	return s.slot(ctx, lastSlotSQL, job)
}

const lastSlotSQL = `SELECT scheduled_at FROM runs
	WHERE job = ? AND manual = 0 AND scheduled_at IS NOT NULL
	ORDER BY at DESC, id DESC LIMIT 1`

func (s *Store) slot(ctx context.Context, q, job string) (time.Time, error) {
	var n int64
	db, err := s.reader()
	if err != nil {
		return time.Time{}, err
	}
	err = db.QueryRowContext(ctx, q, job).Scan(&n)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, fmt.Errorf("history: slot of %s: %w", job, err)
	}
	return FromNanos(sql.NullInt64{Int64: n, Valid: true}), nil
}

func collect(rows *sql.Rows) ([]run.Record, error) {
	var out []run.Record
	if err := eachRow(rows, func(r run.Record) error { out = append(out, r); return nil }); err != nil {
		return nil, err
	}
	return out, nil
}

// eachRow calls fn with each record of rows, in order, and closes them; an
// error of fn stops the reading and is returned.
func eachRow(rows *sql.Rows, fn func(run.Record) error) error {
	defer rows.Close()
	for rows.Next() {
		var id int64
		r, err := scanRecord(rows, &id)
		if err != nil {
			return fmt.Errorf("history: scan: %w", err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("history: query: %w", err)
	}
	return nil
}

type scanner interface{ Scan(dest ...any) error }

// scanRecord reads "id, columns" into a Record.
func scanRecord(sc scanner, id *int64) (run.Record, error) {
	var r run.Record
	var at int64
	var n Nullable
	var resources string
	var wait sql.NullInt64
	err := sc.Scan(id, &r.RunID, &r.Job, &r.Outcome, &at, &n.Sched, &n.Start, &n.End,
		&n.Exit, &r.Reason, &n.HolderPID, &n.HolderHost, &n.HolderJob, &n.HolderRun, &n.HolderSince,
		&r.LogPath, &r.Host, &r.SupervisorPID, &r.PID, &r.Manual, &r.Attempt,
		&n.CPUUser, &n.CPUSystem, &n.MemoryPeak, &r.Usage.OOMKilled, &r.Progress, &resources, &wait)
	if err != nil {
		return run.Record{}, err
	}
	n.Fill(&r)
	FillResources(&r, resources, wait)
	return r, nil
}
