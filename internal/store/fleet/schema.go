package fleet

// schemaLockKey is the advisory lock key that serialises the creation of
// the fleet's tables ("cronvisor fleet schema" as a number; any constant
// no other program uses would do).
const schemaLockKey int64 = 0x63766674736368

// schema is the fleet's tables. Times are Unix nanoseconds (NULL when
// zero), as in the local store, so that a record reads back exactly as it
// was written.
//
// cronvisor_runs holds the contract's history record plus its host, one
// row per run id: a host's records are shipped here and a shipped record
// that arrives again replaces its row, so shipping is idempotent. "at" is
// what a row sorts and filters by: the slot, else the start, else the end.
//
// cronvisor_hosts is a row per host: its last heartbeat by the server's
// clock and its own clock's offset from the server's.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS cronvisor_runs (
		run_id         TEXT    PRIMARY KEY,
		job            TEXT    NOT NULL,
		host           TEXT    NOT NULL,
		outcome        TEXT    NOT NULL,
		at             BIGINT  NOT NULL,
		scheduled_at   BIGINT,
		started_at     BIGINT,
		ended_at       BIGINT,
		exit_code      INTEGER,
		reason         TEXT    NOT NULL DEFAULT '',
		holder_pid     BIGINT,
		holder_host    TEXT,
		holder_job     TEXT,
		holder_run_id  TEXT,
		holder_since   BIGINT,
		log_path       TEXT    NOT NULL DEFAULT '',
		supervisor_pid BIGINT  NOT NULL DEFAULT 0,
		pid            BIGINT  NOT NULL DEFAULT 0,
		manual         BOOLEAN NOT NULL DEFAULT false,
		attempt        INTEGER NOT NULL DEFAULT 1,
		shipped_at     TIMESTAMPTZ NOT NULL DEFAULT now()
	)`,
	`CREATE INDEX IF NOT EXISTS cronvisor_runs_job_at ON cronvisor_runs (job, at)`,
	`CREATE INDEX IF NOT EXISTS cronvisor_runs_at ON cronvisor_runs (at)`,
	`CREATE INDEX IF NOT EXISTS cronvisor_runs_outcome_at ON cronvisor_runs (outcome, at)`,
	`CREATE INDEX IF NOT EXISTS cronvisor_runs_host_outcome ON cronvisor_runs (host, outcome)`,
	`CREATE TABLE IF NOT EXISTS cronvisor_hosts (
		host            TEXT        PRIMARY KEY,
		version         TEXT        NOT NULL DEFAULT '',
		pid             BIGINT      NOT NULL DEFAULT 0,
		started_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
		last_beat       TIMESTAMPTZ NOT NULL DEFAULT now(),
		clock_offset_ms BIGINT      NOT NULL DEFAULT 0,
		stopped         BOOLEAN     NOT NULL DEFAULT false
	)`,
	// The digests of the jobs each host runs (members.go), NULL until it
	// published them.
	`ALTER TABLE cronvisor_hosts ADD COLUMN IF NOT EXISTS job_digests TEXT`,
	// What a run cost (history.UsageArgs): NULL when not measured, and in
	// the rows of hosts from before it.
	`ALTER TABLE cronvisor_runs ADD COLUMN IF NOT EXISTS cpu_user_us BIGINT,
		ADD COLUMN IF NOT EXISTS cpu_system_us BIGINT,
		ADD COLUMN IF NOT EXISTS memory_peak_bytes BIGINT,
		ADD COLUMN IF NOT EXISTS oom_killed BOOLEAN NOT NULL DEFAULT false`,
	// The resource slots a run held and its wait for them
	// (history.ResourceArgs): '' and NULL in the rows of hosts from
	// before them.
	`ALTER TABLE cronvisor_runs ADD COLUMN IF NOT EXISTS resources TEXT NOT NULL DEFAULT '',
		ADD COLUMN IF NOT EXISTS resource_wait_ms BIGINT`,
	schedulesTable,
}
