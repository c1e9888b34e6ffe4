package history

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"time"

	"cronvisor/internal/base/run"
)

// schedulesTable holds the versions of each job's schedule (migration 5):
// a row per start-up or reload that changed how a job's slots are owed,
// with the instant it took effect. shipped is set once the fleet's
// shipper has sent the row (with shipping off it stays 0).
const schedulesTable = `CREATE TABLE schedules (
		id       INTEGER PRIMARY KEY,
		job      TEXT    NOT NULL,
		since    INTEGER NOT NULL,
		change   TEXT    NOT NULL,
		schedule TEXT    NOT NULL DEFAULT '',
		zone     TEXT    NOT NULL DEFAULT '',
		jitter   INTEGER NOT NULL DEFAULT 0,
		enabled  INTEGER NOT NULL DEFAULT 1,
		host     TEXT    NOT NULL DEFAULT '',
		shipped  INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX schedules_job_since ON schedules (job, since);`

const scheduleColumns = `job, since, change, schedule, zone, jitter, enabled, host`

// latestSchedulesSQL is each job's version recorded last (by the index
// on job, whose entries carry the row id).
const latestSchedulesSQL = `SELECT ` + scheduleColumns + ` FROM schedules
	WHERE id IN (SELECT max(id) FROM schedules GROUP BY job)`

// RecordSchedules records, as taking effect at at, each version of
// current (one per job a daemon applies) that owes its slots otherwise
// than the version of its job the store recorded last, and a removal of
// each job the store holds that current lacks, in one transaction. It
// returns what it recorded. A job the store does not know is "added"
// when the store already held versions, else "known": the store only
// began keeping them.
func (s *Store) RecordSchedules(ctx context.Context, at time.Time, host string, current []run.ScheduleVersion) ([]run.ScheduleVersion, error) {
	h, done, err := s.writer()
	if err != nil {
		return nil, err
	}
	defer done()
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("history: record schedules: %w", classify(err))
	}
	defer func() { _ = tx.Rollback() }()
	latest, err := scanSchedules(tx.QueryContext(ctx, latestSchedulesSQL))
	if err != nil {
		return nil, fmt.Errorf("history: record schedules: %w", classify(err))
	}
	changes := scheduleChanges(latest, current, at, host)
	if err := insertSchedules(ctx, tx, changes); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("history: record schedules: %w", classify(err))
	}
	if len(changes) > 0 {
		s.schedulesDue.Store(true)
	}
	return changes, nil
}

// scheduleChanges is what RecordSchedules records: the versions of
// current that differ from latest (each job's version recorded last), and the
// removals of the jobs of latest that current lacks, in job order, each
// with Since at and Host host.
func scheduleChanges(latest, current []run.ScheduleVersion, at time.Time, host string) []run.ScheduleVersion {
	last := make(map[string]run.ScheduleVersion, len(latest))
	for _, v := range latest {
		last[v.Job] = v
	}
	out := make([]run.ScheduleVersion, 0, len(current))
	seen := make(map[string]bool, len(current))
	for _, v := range current {
		seen[v.Job] = true
		old, ok := last[v.Job]
		switch {
		case !ok && len(latest) == 0:
			v.Change = run.ScheduleKnown
		case !ok || old.Change == run.ScheduleRemoved:
			v.Change = run.ScheduleAdded
		case old.SameSlots(v):
			continue
		default:
			v.Change = run.ScheduleChanged
		}
		v.Since, v.Host = at, host
		out = append(out, v)
	}
	for _, old := range latest {
		if !seen[old.Job] && old.Change != run.ScheduleRemoved {
			out = append(out, run.ScheduleVersion{Job: old.Job, Since: at, Change: run.ScheduleRemoved, Host: host})
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Job < out[b].Job })
	return out
}

// Schedules returns the versions of job's schedule ("" for every job),
// oldest first.
func (s *Store) Schedules(ctx context.Context, job string) ([]run.ScheduleVersion, error) {
	db, err := s.reader()
	if err != nil {
		return nil, err
	}
	vs, err := scanSchedules(db.QueryContext(ctx, `SELECT `+scheduleColumns+` FROM schedules
		WHERE ? = '' OR job = ? ORDER BY since, id`, job, job))
	if err != nil {
		return nil, fmt.Errorf("history: read the schedules' versions: %w", classify(err))
	}
	return vs, nil
}

// UnshippedSchedules returns up to limit versions the fleet's shipper has
// not sent yet, oldest first, and the id of the last, for
// SchedulesShipped (0 when there are none). Once a call found none, the
// next ones answer from memory until RecordSchedules records more: the
// shipper asks at every round.
func (s *Store) UnshippedSchedules(ctx context.Context, limit int) (vs []run.ScheduleVersion, last int64, err error) {
	if !s.schedulesDue.Swap(false) {
		return nil, 0, nil
	}
	defer func() {
		if err != nil || last != 0 {
			s.schedulesDue.Store(true) // ask again
		}
	}()
	db, err := s.reader()
	if err != nil {
		return nil, 0, err
	}
	err = db.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM (
		SELECT id FROM schedules WHERE shipped = 0 ORDER BY id LIMIT ?)`, limit).Scan(&last)
	if err == nil && last != 0 {
		vs, err = scanSchedules(db.QueryContext(ctx, `SELECT `+scheduleColumns+` FROM schedules
			WHERE shipped = 0 AND id <= ? ORDER BY id`, last))
	}
	if err != nil {
		return nil, 0, fmt.Errorf("history: read the schedules to ship: %w", classify(err))
	}
	return vs, last, nil
}

// SchedulesShipped marks the versions up to id last as sent.
func (s *Store) SchedulesShipped(ctx context.Context, last int64) error {
	_, err := s.exec(ctx, "schedules shipped", `UPDATE schedules SET shipped = 1 WHERE shipped = 0 AND id <= ?`, last)
	if err != nil {
		s.schedulesDue.Store(true)
	}
	return err
}

// pruneSchedulesSQL deletes the versions older than ?1 but each job's
// newest of them: the one in force at the start of the kept window.
const pruneSchedulesSQL = `DELETE FROM schedules WHERE since < ?1 AND id NOT IN (
	SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY job ORDER BY since DESC, id DESC) AS rn
		FROM schedules WHERE since < ?1) WHERE rn = 1)`

// pruneSchedules applies keep_age (cutoff, Unix nanoseconds) to the
// schedules' versions.
func (s *Store) pruneSchedules(ctx context.Context, cutoff int64) error {
	_, err := s.exec(ctx, "prune schedules", pruneSchedulesSQL, cutoff)
	return err
}

// scanSchedules reads the rows of a query of scheduleColumns.
func scanSchedules(rows *sql.Rows, err error) ([]run.ScheduleVersion, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []run.ScheduleVersion
	for rows.Next() {
		var v run.ScheduleVersion
		var since, jitter int64
		var change string
		if err := rows.Scan(&v.Job, &since, &change, &v.Schedule, &v.Zone, &jitter, &v.Enabled, &v.Host); err != nil {
			return nil, err
		}
		v.Since, v.Change, v.Jitter = time.Unix(0, since), run.ScheduleChange(change), time.Duration(jitter)
		out = append(out, v)
	}
	return out, rows.Err()
}

// scheduleBatch is how many schedule rows one INSERT statement carries:
// a statement a row spent most of the first start of ten thousand jobs
// in database/sql's and the driver's per-statement work.
const scheduleBatch = 256

// insertSchedules inserts vs into schedules, scheduleBatch rows a
// statement (prepared once), in tx. The statements run under a context
// that cannot end, ctx being looked at between them: the driver gives a
// statement whose context can end a goroutine of its own.
func insertSchedules(ctx context.Context, tx *sql.Tx, vs []run.ScheduleVersion) error {
	exec := context.WithoutCancel(ctx)
	var full *sql.Stmt // the statement of a whole batch, prepared once
	if len(vs) >= scheduleBatch {
		var err error
		if full, err = tx.PrepareContext(exec, insertSchedulesSQL(scheduleBatch)); err != nil {
			return fmt.Errorf("history: record schedules: %w", classify(err))
		}
		defer full.Close()
	}
	args := make([]any, 0, scheduleBatch*8)
	for len(vs) > 0 {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("history: record schedules: %w", err)
		}
		chunk := vs[:min(len(vs), scheduleBatch)]
		vs = vs[len(chunk):]
		args = args[:0]
		for _, v := range chunk {
			args = append(args, v.Job, v.Since.UnixNano(), string(v.Change), v.Schedule, v.Zone, int64(v.Jitter), v.Enabled, v.Host)
		}
		var err error
		if len(chunk) == scheduleBatch {
			_, err = full.ExecContext(exec, args...)
		} else {
			_, err = tx.ExecContext(exec, insertSchedulesSQL(len(chunk)), args...)
		}
		if err != nil {
			return fmt.Errorf("history: record the schedules of %s to %s: %w", chunk[0].Job, chunk[len(chunk)-1].Job, classify(err))
		}
	}
	return nil
}

// insertSchedulesSQL inserts n schedule rows.
func insertSchedulesSQL(n int) string {
	return `INSERT INTO schedules (` + scheduleColumns + `) VALUES ` +
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?), ", n), ", ")
}
