package fleet

import (
	"context"
	"fmt"
	"time"

	"cronvisor/internal/base/run"
)

// schedulesTable is the versions of the jobs' schedules every host
// applied (history.Store.RecordSchedules), shipped from each host's
// store; a version shipped twice is one row.
const schedulesTable = `CREATE TABLE IF NOT EXISTS cronvisor_schedules (
		host     TEXT    NOT NULL,
		job      TEXT    NOT NULL,
		since    BIGINT  NOT NULL,
		change   TEXT    NOT NULL,
		schedule TEXT    NOT NULL DEFAULT '',
		zone     TEXT    NOT NULL DEFAULT '',
		jitter   BIGINT  NOT NULL DEFAULT 0,
		enabled  BOOLEAN NOT NULL DEFAULT true,
		PRIMARY KEY (host, job, since)
	)`

// ScheduleOutbox is the local store's side of shipping the schedules'
// versions (a *history.Store).
type ScheduleOutbox interface {
	UnshippedSchedules(ctx context.Context, limit int) ([]run.ScheduleVersion, int64, error)
	SchedulesShipped(ctx context.Context, last int64) error
}

// ScheduleRemote is the shared store's side of it (a *Store).
type ScheduleRemote interface {
	UpsertSchedules(ctx context.Context, vs []run.ScheduleVersion) error
}

// shipSchedules sends the versions the local store has not shipped yet,
// when both sides keep them; a round ships them before the records.
func (s *Shipper) shipSchedules(ctx context.Context) error {
	local, ok := s.local.(ScheduleOutbox)
	remote, ok2 := s.remote.(ScheduleRemote)
	if !ok || !ok2 {
		return nil
	}
	for {
		vs, last, err := local.UnshippedSchedules(ctx, shipBatch)
		if err != nil || last == 0 {
			return err
		}
		if err := remote.UpsertSchedules(ctx, vs); err != nil {
			return err
		}
		if err := local.SchedulesShipped(ctx, last); err != nil {
			return err
		}
	}
}

// UpsertSchedules writes vs in one transaction; a version already there
// (same host, job and instant) is left as it is. A version without a
// host is this store's host's.
func (s *Store) UpsertSchedules(ctx context.Context, vs []run.ScheduleVersion) error {
	if len(vs) == 0 {
		return nil
	}
	if err := s.EnsureSchema(ctx); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("history backend: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, v := range vs {
		if v.Host == "" {
			v.Host = s.host
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO cronvisor_schedules (host, job, since, change, schedule, zone, jitter, enabled)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (host, job, since) DO NOTHING`,
			v.Host, v.Job, v.Since.UnixNano(), string(v.Change), v.Schedule, v.Zone, int64(v.Jitter), v.Enabled); err != nil {
			return fmt.Errorf("history backend: ship the schedule of %s: %w", v.Job, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("history backend: ship schedules: %w", err)
	}
	return nil
}

// Schedules returns the versions of job's schedule ("" for every job)
// that every host applied, oldest first (none before any host shipped
// one).
func (s *Store) Schedules(ctx context.Context, job string) ([]run.ScheduleVersion, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT host, job, since, change, schedule, zone, jitter, enabled
		FROM cronvisor_schedules WHERE $1 = '' OR job = $1 ORDER BY since, host`, job)
	if noTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("history backend: read the schedules' versions: %w", err)
	}
	defer rows.Close()
	var out []run.ScheduleVersion
	for rows.Next() {
		var v run.ScheduleVersion
		var since, jitter int64
		var change string
		if err := rows.Scan(&v.Host, &v.Job, &since, &change, &v.Schedule, &v.Zone, &jitter, &v.Enabled); err != nil {
			return nil, fmt.Errorf("history backend: read the schedules' versions: %w", err)
		}
		v.Since, v.Change, v.Jitter = time.Unix(0, since), run.ScheduleChange(change), time.Duration(jitter)
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history backend: read the schedules' versions: %w", err)
	}
	return out, nil
}

// pruneSchedules deletes the versions older than before but each host's
// newest of them for each job: the one in force at the start of the
// kept window.
func (s *Store) pruneSchedules(ctx context.Context, before time.Time) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM cronvisor_schedules d WHERE since < $1 AND EXISTS (
		SELECT 1 FROM cronvisor_schedules n WHERE n.host = d.host AND n.job = d.job AND n.since > d.since AND n.since < $1)`,
		before.UnixNano())
	if noTable(err) || err == nil {
		return nil
	}
	return fmt.Errorf("history backend: prune schedules: %w", err)
}
