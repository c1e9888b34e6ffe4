package history

import (
	"context"
	"fmt"
)

// migrations are applied in order; PRAGMA user_version holds how many have
// run. Append only: never edit a migration that has shipped.
var migrations = []string{
	// 1: the runs table. Times are Unix nanoseconds (NULL when zero) so that
	// ranges and ordering are integer compares. "at" is the time a row sorts
	// and filters by: the slot when there is one, else the start, else the
	// end; it is NOT NULL so every index on it is total.
	`CREATE TABLE runs (
		id             INTEGER PRIMARY KEY,
		run_id         TEXT    NOT NULL UNIQUE,
		job            TEXT    NOT NULL,
		outcome        TEXT    NOT NULL,
		at             INTEGER NOT NULL,
		scheduled_at   INTEGER,
		started_at     INTEGER,
		ended_at       INTEGER,
		exit_code      INTEGER,
		reason         TEXT    NOT NULL DEFAULT '',
		holder_pid     INTEGER,
		holder_host    TEXT,
		holder_job     TEXT,
		holder_run_id  TEXT,
		holder_since   INTEGER,
		log_path       TEXT    NOT NULL DEFAULT '',
		host           TEXT    NOT NULL DEFAULT '',
		supervisor_pid INTEGER NOT NULL DEFAULT 0,
		pid            INTEGER NOT NULL DEFAULT 0,
		manual         INTEGER NOT NULL DEFAULT 0
	);
	-- "skips of job X since T", last ok slot of a job
	CREATE INDEX runs_job_outcome_at ON runs (job, outcome, at);
	-- one job's history newest first, its last slot
	CREATE INDEX runs_job_at ON runs (job, at);
	-- all jobs by outcome (open runs, --outcome without --job)
	CREATE INDEX runs_outcome_at ON runs (outcome, at);
	-- everything newest first
	CREATE INDEX runs_at ON runs (at);`,
	// 2: each attempt of a retried slot is its own row; 1 for the first.
	`ALTER TABLE runs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;`,
	// 3: the outbox of the fleet's shared history: a row per write of a
	// run, filled by triggers that exist only while shipping is on (see
	// SetShipping), emptied as the rows reach the shared store.
	`CREATE TABLE ship (seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL);`,
	// 4: what a run cost (see UsageArgs): NULL when not measured, so rows
	// from before it read as unmeasured.
	`ALTER TABLE runs ADD COLUMN cpu_user_us INTEGER;
	ALTER TABLE runs ADD COLUMN cpu_system_us INTEGER;
	ALTER TABLE runs ADD COLUMN memory_peak_bytes INTEGER;
	ALTER TABLE runs ADD COLUMN oom_killed INTEGER NOT NULL DEFAULT 0;`,
	// 5: the versions of each job's schedule (see schedules.go), so that
	// audit judges a slot against the schedule in force at its instant.
	schedulesTable,
	// 6: the progress text of a run's last heartbeat (docs/heartbeats.md),
	// written with its end; '' for none, and for rows from before it.
	`ALTER TABLE runs ADD COLUMN progress TEXT NOT NULL DEFAULT '';`,
	// 7: the resource slots a run held (space separated, "db/0 disk/0";
	// '' for none) and how long it, or a skipped fire, waited for them
	// (NULL: it neither took a slot nor waited; see ResourceArgs).
	`ALTER TABLE runs ADD COLUMN resources TEXT NOT NULL DEFAULT '';
	ALTER TABLE runs ADD COLUMN resource_wait_ms INTEGER;`,
}

func (h *handle) version(ctx context.Context) (int, error) {
	var v int
	err := h.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}

// migrate applies the missing migrations in one write transaction, reading
// the version inside it, so that two supervisors starting at once on a new
// state dir do not both create the schema.
func (h *handle) migrate(ctx context.Context) error {
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v > len(migrations) {
		return fmt.Errorf("%w: version %d, this cronvisor knows %d", ErrSchema, v, len(migrations))
	}
	if v == len(migrations) {
		return nil
	}
	for i := v; i < len(migrations); i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations))); err != nil {
		return err
	}
	return tx.Commit()
}
