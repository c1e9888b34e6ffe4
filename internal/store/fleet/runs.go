package fleet

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"cronvisor/internal/base/run"
	"cronvisor/internal/store/history"
)

// runColumns are cronvisor_runs' columns a Record maps to, in the order
// of runArgs and scanRun.
const runColumns = `run_id, job, host, outcome, at, scheduled_at, started_at, ended_at,
	exit_code, reason, holder_pid, holder_host, holder_job, holder_run_id, holder_since,
	log_path, supervisor_pid, pid, manual, attempt, ` + usageColumns + `, ` + resourceColumns

// usageColumns are the cost's columns, and resourceColumns the resource
// slots' (history.ResourceArgs), the last of runColumns, which a table no
// host of this version has migrated yet lacks: a reader (who creates
// nothing) selects usageUnknown or resourceUnknown in their place.
const (
	usageColumns    = `cpu_user_us, cpu_system_us, memory_peak_bytes, oom_killed`
	usageUnknown    = `NULL::bigint, NULL::bigint, NULL::bigint, false`
	resourceColumns = `resources, resource_wait_ms`
	resourceUnknown = `''::text, NULL::bigint`
)

// upsertSQL writes one record, idempotent by run id. A stored row is
// replaced when it is still running (by anything: a running row's pid,
// or its end), never by a running one once it has ended, and by another
// ending only when the stored one is a peer's guess (a dead host's run
// closed "interrupted", "host lost ..." by another host) or comes from
// the same host with the same outcome (the same record again, or a note
// the host added to its own reason).
//
// $27 says the record is its host's own guess of the end (ownGuess):
// over a peer's guess it keeps the earlier end, since the peer's is the
// host's last beat and the host's own is only when it came back, and
// keeps the peer's reason (still "host lost", so a real end may yet
// replace it) with the host's appended once.
const upsertSQL = `INSERT INTO cronvisor_runs (` + runColumns + `)
	VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26)
	ON CONFLICT (run_id) DO UPDATE SET job = EXCLUDED.job, host = EXCLUDED.host,
		outcome = EXCLUDED.outcome, at = EXCLUDED.at, scheduled_at = EXCLUDED.scheduled_at,
		started_at = EXCLUDED.started_at,
		ended_at = CASE WHEN ` + guessOverGuess + ` THEN LEAST(cronvisor_runs.ended_at, EXCLUDED.ended_at)
			ELSE EXCLUDED.ended_at END,
		exit_code = EXCLUDED.exit_code,
		reason = CASE WHEN ` + guessOverGuess + ` THEN cronvisor_runs.reason || '; on its return ' ||
			EXCLUDED.host || ' recorded: ' || EXCLUDED.reason ELSE EXCLUDED.reason END,
		holder_pid = EXCLUDED.holder_pid, holder_host = EXCLUDED.holder_host,
		holder_job = EXCLUDED.holder_job, holder_run_id = EXCLUDED.holder_run_id,
		holder_since = EXCLUDED.holder_since, log_path = EXCLUDED.log_path,
		supervisor_pid = EXCLUDED.supervisor_pid, pid = EXCLUDED.pid,
		manual = EXCLUDED.manual, attempt = EXCLUDED.attempt, cpu_user_us = EXCLUDED.cpu_user_us,
		cpu_system_us = EXCLUDED.cpu_system_us, memory_peak_bytes = EXCLUDED.memory_peak_bytes,
		oom_killed = EXCLUDED.oom_killed, resources = EXCLUDED.resources,
		resource_wait_ms = EXCLUDED.resource_wait_ms, shipped_at = now()
	WHERE cronvisor_runs.outcome = 'running'
		OR (` + guessOverGuess + ` AND strpos(cronvisor_runs.reason, EXCLUDED.reason) = 0)
		OR (NOT $27::boolean AND EXCLUDED.outcome <> 'running' AND (` + peerGuess + `
			OR (cronvisor_runs.host = EXCLUDED.host AND cronvisor_runs.outcome = EXCLUDED.outcome)))`

// peerGuess tells, in upsertSQL, that the stored row is a peer's guess
// that its host was lost (CloseLostRuns); guessOverGuess that the record
// is its host's own guess (ownGuess, $27) of such a row's end.
const (
	peerGuess      = `(cronvisor_runs.outcome = 'interrupted' AND cronvisor_runs.reason LIKE 'host lost%')`
	guessOverGuess = `($27::boolean AND ` + peerGuess + `)`
)

// ownGuess reports whether r is its host's guess of a run's end rather
// than an end anyone saw: the interrupted record recovery writes for a
// dead supervisor's run that no keeper saw end (recovery's orphan
// reason, "supervisor (pid N on HOST) died ...", with the instant it
// noticed as the end). A keeper's end (its own reason, an exit code
// where it had one) is a real end.
func ownGuess(r run.Record) bool {
	return r.Outcome == run.Interrupted && r.ExitCode == nil &&
		strings.HasPrefix(r.Reason, "supervisor (pid ") && strings.Contains(r.Reason, ") died ")
}

// Upsert writes recs in one transaction, each idempotent by run id (see
// upsertSQL). A record without a host is this store's host's.
func (s *Store) Upsert(ctx context.Context, recs []run.Record) error {
	if len(recs) == 0 {
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
	st, err := tx.PrepareContext(ctx, upsertSQL)
	if err != nil {
		return fmt.Errorf("history backend: upsert: %w", err)
	}
	for _, r := range recs {
		if r.Host == "" {
			r.Host = s.host
		}
		if _, err := st.ExecContext(ctx, append(runArgs(r), ownGuess(r))...); err != nil {
			return fmt.Errorf("history backend: upsert %s/%s: %w", r.Job, r.RunID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("history backend: upsert: %w", err)
	}
	return nil
}

// runArgs are r's values for runColumns, in order.
func runArgs(r run.Record) []any {
	var hPID, hHost, hJob, hRun, hSince any
	if h := r.Holder; h != nil {
		hPID, hHost, hJob, hRun, hSince = int64(h.PID), h.Host, h.Job, h.RunID, history.Nanos(h.Since)
	}
	var exit any
	if r.ExitCode != nil {
		exit = int32(*r.ExitCode)
	}
	return append([]any{r.RunID, r.Job, r.Host, string(r.Outcome), sortTime(r).UnixNano(),
		history.Nanos(r.ScheduledAt), history.Nanos(r.StartedAt), history.Nanos(r.EndedAt), exit, r.Reason,
		hPID, hHost, hJob, hRun, hSince, r.LogPath, int64(r.SupervisorPID), int64(r.PID), r.Manual, int32(max(r.Attempt, 1))},
		append(history.UsageArgs(r.Usage), history.ResourceArgs(r)...)...)
}

// sortTime is the "at" column, as in the local store: the slot, else the
// start, else the end.
func sortTime(r run.Record) time.Time {
	for _, t := range []time.Time{r.ScheduledAt, r.StartedAt, r.EndedAt} {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// Query returns the records of every host that match f, newest first,
// as history.Store.Query does: by the slot, else the start, else the end.
func (s *Store) Query(ctx context.Context, f history.Filter) ([]run.Record, error) {
	var where []string
	var a []any
	arg := func(cond string, v any) {
		a = append(a, v)
		where = append(where, fmt.Sprintf(cond, len(a)))
	}
	if f.Job != "" {
		arg("job = $%d", f.Job)
	}
	if len(f.Outcomes) > 0 {
		outs := make([]string, len(f.Outcomes))
		for i, o := range f.Outcomes {
			outs[i] = string(o)
		}
		arg("outcome = ANY($%d)", outs)
	}
	if !f.Since.IsZero() {
		arg("at >= $%d", f.Since.UnixNano())
	}
	if !f.Before.IsZero() {
		arg("at < $%d", f.Before.UnixNano())
	}
	q := "SELECT " + runColumns + " FROM cronvisor_runs"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY at DESC, started_at DESC NULLS LAST, run_id DESC"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	return s.queryRuns(ctx, q, a)
}

// queryRuns runs q, a SELECT of runColumns, and reads its records.
func (s *Store) queryRuns(ctx context.Context, q string, a []any) ([]run.Record, error) {
	rows, err := s.db.QueryContext(ctx, q, a...)
	if noColumn(err) {
		// A table of hosts from before the resource columns: no run
		// held a slot.
		q = strings.Replace(q, resourceColumns, resourceUnknown, 1)
		rows, err = s.db.QueryContext(ctx, q, a...)
	}
	if noColumn(err) {
		// A table of hosts from before the cost columns: no run was measured.
		rows, err = s.db.QueryContext(ctx, strings.Replace(q, usageColumns, usageUnknown, 1), a...)
	}
	if noTable(err) {
		return nil, nil // no host has shipped anything yet
	}
	if err != nil {
		return nil, fmt.Errorf("history backend: query: %w", err)
	}
	defer rows.Close()
	var out []run.Record
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("history backend: query: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history backend: query: %w", err)
	}
	return out, nil
}

// noTable tells whether err is PostgreSQL's undefined_table: the readers
// create nothing (their role may only read), and no table yet is no
// record yet.
func noTable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42P01"
}

// noColumn tells whether err is PostgreSQL's undefined_column.
func noColumn(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42703"
}

// scanRun reads runColumns into a Record.
func scanRun(rows *sql.Rows) (run.Record, error) {
	var r run.Record
	var at, sPID, pid int64
	var attempt int32
	var n history.Nullable
	var resources string
	var wait sql.NullInt64
	err := rows.Scan(&r.RunID, &r.Job, &r.Host, &r.Outcome, &at, &n.Sched, &n.Start, &n.End,
		&n.Exit, &r.Reason, &n.HolderPID, &n.HolderHost, &n.HolderJob, &n.HolderRun, &n.HolderSince,
		&r.LogPath, &sPID, &pid, &r.Manual, &attempt, &n.CPUUser, &n.CPUSystem, &n.MemoryPeak, &r.Usage.OOMKilled,
		&resources, &wait)
	if err != nil {
		return run.Record{}, err
	}
	r.SupervisorPID, r.PID, r.Attempt = int(sPID), int(pid), int(attempt)
	n.Fill(&r)
	history.FillResources(&r, resources, wait)
	return r, nil
}

// summariesSQL is history's Summaries across the fleet: per job of an
// array, the newest record's outcome and end, the newest start, and the
// newest slot of a scheduled fire, each in Query's order.
const summariesSQL = `SELECT j.job, l.outcome, l.ended_at,
	(SELECT r.started_at FROM cronvisor_runs r WHERE r.job = j.job AND r.started_at IS NOT NULL
		ORDER BY r.at DESC, r.started_at DESC LIMIT 1),
	(SELECT r.scheduled_at FROM cronvisor_runs r WHERE r.job = j.job AND NOT r.manual
		AND r.scheduled_at IS NOT NULL ORDER BY r.at DESC LIMIT 1)
	FROM unnest($1::text[]) AS j(job)
	JOIN LATERAL (SELECT outcome, ended_at FROM cronvisor_runs r WHERE r.job = j.job
		ORDER BY r.at DESC, r.started_at DESC NULLS LAST, r.run_id DESC LIMIT 1) l ON true`

// Summaries is history.Store.Summaries across the fleet: each job's last
// outcome, last start and last slot, whichever host recorded them; jobs
// without records are absent.
func (s *Store) Summaries(ctx context.Context, jobs []string) (map[string]history.Summary, error) {
	out := make(map[string]history.Summary, len(jobs))
	if len(jobs) == 0 {
		return out, nil
	}
	rows, err := s.db.QueryContext(ctx, summariesSQL, jobs)
	if noTable(err) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("history backend: summaries: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var job, outcome string
		var ended, started, slot sql.NullInt64
		if err := rows.Scan(&job, &outcome, &ended, &started, &slot); err != nil {
			return nil, fmt.Errorf("history backend: summaries: %w", err)
		}
		out[job] = history.Summary{Outcome: run.Outcome(outcome), EndedAt: history.FromNanos(ended),
			StartedAt: history.FromNanos(started), LastSlot: history.FromNanos(slot)}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history backend: summaries: %w", err)
	}
	return out, nil
}
