package history

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// pruneSQL selects the finished rows beyond a job's newest ?1 rows or older
// than ?2 (each bound 0 when that limit is off). Each job's latest ok row
// and latest scheduled fire are kept whatever their age, because LastOKSlot
// and LastSlot read them after any downtime. A row chosen stays prunable
// while new rows arrive (ranks and ages only grow), so the choice can be
// made outside the write transactions that delete.
const pruneSQL = `
WITH ranked AS (
	SELECT id, outcome, at,
		ROW_NUMBER() OVER (PARTITION BY job ORDER BY at DESC, id DESC) AS rn
	FROM runs
), jobs AS (
	SELECT DISTINCT job FROM runs
), cursors AS (
	SELECT (SELECT id FROM runs r WHERE r.job = jobs.job AND outcome = 'ok'
		AND scheduled_at IS NOT NULL ORDER BY at DESC, id DESC LIMIT 1) AS id FROM jobs
	UNION
	SELECT (SELECT id FROM runs r WHERE r.job = jobs.job AND manual = 0
		AND scheduled_at IS NOT NULL ORDER BY at DESC, id DESC LIMIT 1) FROM jobs
)
SELECT id FROM ranked
WHERE outcome <> 'running'
  AND ((?1 > 0 AND rn > ?1) OR (?2 > 0 AND at < ?2))
  AND id NOT IN (SELECT id FROM cursors WHERE id IS NOT NULL)
ORDER BY id -- a batch of neighbouring ids touches few pages
`

// pruneBatch bounds the rows deleted in one write transaction, so that a
// first prune of a large backlog holds the write lock for tens of
// milliseconds at a time rather than seconds, and other supervisors'
// writes get through within their busy timeout.
const pruneBatch = 5000

// Prune removes finished records beyond the newest keepRuns of each job or
// older than keepAge before now (0 turns a limit off), and the log files of
// the removed records; keepAge prunes the schedules' versions too, each
// job's version in force at the cutoff kept. Open runs are never removed, nor each job's latest
// ok run and latest scheduled fire. A log file that cannot be removed is
// reported in err after its row is gone; removed counts rows.
func (s *Store) Prune(ctx context.Context, keepRuns int, keepAge time.Duration, now time.Time) (removed int, err error) {
	if keepRuns <= 0 && keepAge <= 0 {
		return 0, nil
	}
	var cutoff int64
	if keepAge > 0 {
		cutoff = now.Add(-keepAge).UnixNano()
	}
	ids, err := s.prunable(ctx, max(keepRuns, 0), cutoff)
	if err != nil {
		return 0, fmt.Errorf("history: prune: %w", err)
	}
	var errs []error
	for len(ids) > 0 {
		n := min(len(ids), pruneBatch)
		logs, err := s.deleteRows(ctx, ids[:n])
		if err != nil {
			return removed, fmt.Errorf("history: prune: %w", err)
		}
		ids, removed = ids[n:], removed+len(logs)
		for _, p := range logs {
			if err := removeLog(p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	var out []error
	if cutoff > 0 {
		if err := s.pruneSchedules(ctx, cutoff); err != nil {
			out = append(out, err)
		}
	}
	if len(errs) > 0 {
		out = append(out, fmt.Errorf("history: prune logs: %w", errors.Join(errs...)))
	}
	if removed > 0 {
		if err := s.vacuum(ctx); err != nil {
			out = append(out, fmt.Errorf("history: give the pruned space back: %w", err))
		}
	}
	return removed, errors.Join(out...)
}

// vacuumStep is how many free pages one incremental_vacuum hands back to
// the file system (8 MiB of 4-KiB pages): each step is a write
// transaction of its own, so runs' records get through between them
// within their busy timeout rather than wait for the whole file.
const vacuumStep = 2048

// vacuum truncates the database file by its free pages, a step at a time,
// where the database keeps them apart (auto_vacuum incremental: every
// store created since it was turned on); elsewhere the pages stay free
// for the next records, as before.
func (s *Store) vacuum(ctx context.Context) error {
	db, err := s.reader()
	if err != nil {
		return err
	}
	var mode int
	if err := db.QueryRowContext(ctx, "PRAGMA auto_vacuum").Scan(&mode); err != nil || mode != 2 {
		return err
	}
	last := -1
	for {
		var free int
		if err := db.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&free); err != nil || free == 0 {
			return err
		}
		if free == last {
			return nil // nothing more it can give back now
		}
		last = free
		if _, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA incremental_vacuum(%d)", vacuumStep)); err != nil {
			return err
		}
	}
}

func (s *Store) prunable(ctx context.Context, keepRuns int, cutoff int64) ([]int64, error) {
	db, err := s.reader()
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, pruneSQL, keepRuns, cutoff)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// deleteRows deletes the rows with the given ids (those still there) in one
// transaction and returns their log paths ("" for none), one per row.
func (s *Store) deleteRows(ctx context.Context, ids []int64) ([]string, error) {
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	db, err := s.reader()
	if err != nil {
		return nil, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `DELETE FROM runs
		WHERE id IN (SELECT value FROM json_each(?)) RETURNING log_path`, string(list))
	if err != nil {
		return nil, err
	}
	var logs []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return nil, err
		}
		logs = append(logs, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return logs, tx.Commit()
}

// removeLog removes a run's log file. Only a regular file is removed, so a
// damaged record cannot take a directory or a device with it.
func removeLog(p string) error {
	if p == "" {
		return nil
	}
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s: not a regular file, left in place", p)
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
