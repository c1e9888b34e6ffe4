package sql

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"cronvisor/internal/base/mask"
	"cronvisor/internal/lock"
)

// PostgresLocker is the PostgreSQL backend: a session advisory lock,
// `pg_try_advisory_lock(key)` on a connection pinned to the lease and
// `pg_advisory_unlock(key)` on the same one. See NewPostgresLocker for
// what it promises and where it stops.
type PostgresLocker struct{ *sqlLocker }

var _ lock.Locker = (*PostgresLocker)(nil)

// PostgresLockKey is the advisory lock key of full (prefix + lock name):
// the first 8 bytes of its SHA-256 read as a big-endian signed 64-bit
// integer. Any program can take the same lock with
//
//	SELECT pg_try_advisory_lock(('x' || left(encode(sha256(convert_to(n, 'UTF8')), 'hex'), 16))::bit(64)::bigint)
//
// in the same database: advisory locks are per database.
func PostgresLockKey(full string) int64 {
	sum := sha256.Sum256([]byte(full))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// NewPostgresLocker returns a locker on the server of rawURL
// (postgres://user:pass@host:port/db; see pgx.ParseConfig). It does not
// connect: an unreachable server makes each Acquire fail with
// ErrUnavailable until it is back. An unset connect_timeout defaults to
// 1 s so that a fire is skipped quickly.
//
// What it promises: while the server stays up, at most one session holds
// a key, so at most one supervisor runs under a lock; a job runs at most
// once per slot across all supervisors on the database; a run whose
// lock's connection is terminated (pg_terminate_backend) or breaks is
// told within 2×KeepAlive (Lost closes) and, its supervisor dying, ended
// at once by its guard: the server frees the lock the moment the session
// ends.
//
// Where it stops: advisory locks are not replicated, so after a failover
// to a standby every lock is free while old holders may still run; a
// pooler in transaction or statement mode (PgBouncer's pool_mode =
// transaction) hands each statement to any server session and breaks
// session locks: Acquire notices that its session changed between two
// statements and refuses, and a lease whose check runs on another session
// is lost.
func NewPostgresLocker(rawURL string, opts ...SQLOption) (*PostgresLocker, error) {
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("lock backend: invalid postgres url: %v", mask.Error(err, rawURL))
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = time.Second
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	if cfg.RuntimeParams["application_name"] == "" {
		// Tells a peer that a session holding a lock with no record of
		// its own yet is a cronvisor writing it (see holderOf).
		cfg.RuntimeParams["application_name"] = "cronvisor"
	}
	d := postgresDialect{addr: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), app: cfg.RuntimeParams["application_name"]}
	key := func(full string) string { return strconv.FormatInt(PostgresLockKey(full), 10) }
	l, err := newSQLLocker(stdlib.OpenDB(*cfg), d, key, opts)
	if err != nil {
		return nil, err
	}
	return &PostgresLocker{l}, nil
}

// postgresDialect speaks PostgreSQL; app is the application_name of its
// sessions.
type postgresDialect struct{ addr, app string }

func (d postgresDialect) server() string { return "postgres at " + d.addr }

func (postgresDialect) schema() []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS cronvisor_locks (
			name TEXT PRIMARY KEY, job TEXT NOT NULL, host TEXT NOT NULL,
			pid BIGINT NOT NULL, supervisor_pid BIGINT NOT NULL, run_id TEXT NOT NULL,
			slot TEXT NOT NULL, since TEXT NOT NULL, conn_id BIGINT NOT NULL,
			fencing_token BIGINT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS cronvisor_slots (
			name TEXT NOT NULL, job TEXT NOT NULL, slot_ns BIGINT NOT NULL,
			run_id TEXT NOT NULL, host TEXT NOT NULL, since TEXT NOT NULL,
			fencing_token BIGINT NOT NULL DEFAULT 0, outcome TEXT NOT NULL DEFAULT '',
			through_ns BIGINT NOT NULL DEFAULT 0,
			PRIMARY KEY (name, job, slot_ns))`,
		// The fencing tokens: one sequence for every lock, which only
		// rises, whatever happens to the rows.
		`CREATE SEQUENCE IF NOT EXISTS cronvisor_fence`,
	}
}

// ledgerColumns, as in schema's CREATE TABLE: a row claimed by a
// cronvisor from before the ledger has token 0 and an empty outcome.
func (postgresDialect) ledgerColumns() [][2]string {
	return [][2]string{
		{"fencing_token", "BIGINT NOT NULL DEFAULT 0"},
		{"outcome", "TEXT NOT NULL DEFAULT ''"},
		{"through_ns", "BIGINT NOT NULL DEFAULT 0"},
	}
}

func (postgresDialect) currentSchema() string { return "current_schema()" }

// lockLedger takes a transaction-scoped advisory lock of its own for the
// lock's ledger (not the lock's key, which a run holds for its whole
// life): claims of its slots, Acquire's and ClaimMissed's, queue behind
// it for the few milliseconds of a transaction, and each then reads the
// rows of the one before it (READ COMMITTED reads afresh per statement).
func (postgresDialect) lockLedger(ctx context.Context, tx *sql.Tx, full string) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, PostgresLockKey(full+":ledger"))
	return err
}

func (postgresDialect) missedFence(ctx context.Context, tx *sql.Tx) (int64, error) {
	var n int64
	err := tx.QueryRowContext(ctx, `SELECT nextval('cronvisor_fence')`).Scan(&n)
	return n, err
}

func (postgresDialect) duplicate(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

func (postgresDialect) rebind(q string) string { return rebindDollar(q) }

func pgKey(key string) int64 { n, _ := strconv.ParseInt(key, 10, 64); return n }

// The server's side of a lock's connection (see tryLock). A holder cut
// off from the server (a partition, a host gone) sends nothing more:
// the server sends keep-alive probes after pgKeepalivesIdle of silence,
// and ends the session, freeing its locks, once nothing has come back
// for pgUserTimeout (Linux's TCP_USER_TIMEOUT, which then replaces the
// probe count; the count bounds it on other systems). A session with
// data unacknowledged is ended by the same timeout. It must exceed what
// the holder takes to see the loss and end its run (see
// docs/locking.md), and the client's own timeout (clientKeepAlive), so
// that a holder always gives up first.
const (
	pgKeepalivesIdle     = 5 // seconds
	pgKeepalivesInterval = 1
	pgKeepalivesCount    = 5
	pgUserTimeout        = 10 * time.Second
)

// tryLock sets the session's TCP keep-alive and user timeout on the
// server's side (user-settable parameters, set on the socket at once) in
// the statement that takes the lock, so no lock of ours is ever held on
// a session without them, at no extra round trip. The target list is
// evaluated in order: the settings come first.
func (postgresDialect) tryLock(ctx context.Context, c *sql.Conn, key string) (bool, error) {
	var ok bool
	var set [4]string
	err := c.QueryRowContext(ctx, `SELECT set_config('tcp_keepalives_idle', $2, false),
		set_config('tcp_keepalives_interval', $3, false), set_config('tcp_keepalives_count', $4, false),
		set_config('tcp_user_timeout', $5, false), pg_try_advisory_lock($1)`,
		pgKey(key), strconv.Itoa(pgKeepalivesIdle), strconv.Itoa(pgKeepalivesInterval),
		strconv.Itoa(pgKeepalivesCount), strconv.FormatInt(pgUserTimeout.Milliseconds(), 10)).
		Scan(&set[0], &set[1], &set[2], &set[3], &ok)
	return ok, err
}

func (postgresDialect) unlock(ctx context.Context, c *sql.Conn, key string) error {
	var ok bool
	return c.QueryRowContext(ctx, `SELECT pg_advisory_unlock($1)`, pgKey(key)).Scan(&ok)
}

// advisoryHolder selects the session holding a bigint advisory key in
// this database: pg_locks splits the key into classid (high 32 bits) and
// objid (low 32 bits), with objsubid 1.
const advisoryHolder = `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
	AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND classid::int8 = $1 AND objid::int8 = $2 AND objsubid = 1`

func splitKey(key string) (int64, int64) {
	k := uint64(pgKey(key))
	return int64(k >> 32), int64(k & 0xffffffff)
}

func (postgresDialect) stillHeld(ctx context.Context, c *sql.Conn, key string) (bool, error) {
	hi, lo := splitKey(key)
	var ok bool
	err := c.QueryRowContext(ctx, `SELECT EXISTS (`+advisoryHolder+` AND pid = pg_backend_pid())`, hi, lo).Scan(&ok)
	return ok, err
}

// backendStart is a backend's start in whole microseconds since the
// epoch, the same expression wherever it is compared.
const backendStart = `(extract(epoch FROM backend_start) * 1000000)::bigint`

func (postgresDialect) session(ctx context.Context, c *sql.Conn) (sessionID, error) {
	var s sessionID
	var start sql.NullInt64
	err := c.QueryRowContext(ctx, `SELECT pg_backend_pid(), COALESCE(inet_client_port(), 0),
		(SELECT `+backendStart+` FROM pg_stat_activity WHERE pid = pg_backend_pid())`).Scan(&s.ID, &s.Port, &start)
	s.Start = start.Int64
	return s, err
}

// socket is the driver's own connection under c.
func (postgresDialect) socket(c *sql.Conn, _ sessionID) *os.File {
	var f *os.File
	_ = c.Raw(func(dc any) error {
		if pc, ok := dc.(*stdlib.Conn); ok {
			f = socketOf(pc.Conn().PgConn().Conn())
		}
		return nil
	})
	return f
}

// endStale terminates the backend only if its pid, client port and start
// are the lost session's: a pid the server has since given to another
// session differs in its start.
func (postgresDialect) endStale(ctx context.Context, q querier, s staleSession) (bool, error) {
	var ended bool
	err := q.QueryRowContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE pid = $1 AND client_port = $2 AND `+backendStart+` = $3`, s.ID, s.Port, s.Start).Scan(&ended)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return ended, err
}

// mayBeClaiming reports whether session id is one of ours (by its
// application_name), which may be writing its record right now.
func (d postgresDialect) mayBeClaiming(ctx context.Context, q querier, id int64) bool {
	var app string
	err := q.QueryRowContext(ctx, `SELECT application_name FROM pg_stat_activity WHERE pid = $1`, id).Scan(&app)
	return err == nil && app == d.app
}

func (postgresDialect) owner(ctx context.Context, q querier, key string) (int64, bool, error) {
	hi, lo := splitKey(key)
	var id int64
	err := q.QueryRowContext(ctx, advisoryHolder+` LIMIT 1`, hi, lo).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return id, err == nil, err
}

// describe reads the session from pg_stat_activity; without
// pg_read_all_stats another role's client fields read as NULL.
func (postgresDialect) describe(ctx context.Context, q querier, id int64) string {
	s := fmt.Sprintf("postgres backend pid %d", id)
	var user, app, addr sql.NullString
	err := q.QueryRowContext(ctx, `SELECT usename, application_name, host(client_addr)
		FROM pg_stat_activity WHERE pid = $1`, id).Scan(&user, &app, &addr)
	if err == nil {
		parts := []string{"user " + user.String}
		if app.String != "" {
			parts = append(parts, "application "+app.String)
		}
		if addr.Valid {
			parts = append(parts, "from "+addr.String)
		}
		s += ": " + strings.Join(parts, ", ")
	}
	return s
}

// upsertRecord draws the fencing token from cronvisor_fence, and never
// below the lock's last one plus one: a row written by a cronvisor from
// before the sequence (its own count per lock) is still passed.
func (postgresDialect) upsertRecord(ctx context.Context, tx *sql.Tx, r sqlRecord) (int64, error) {
	h := r.H
	var fence int64
	err := tx.QueryRowContext(ctx, `INSERT INTO cronvisor_locks AS l
		(name, job, host, pid, supervisor_pid, run_id, slot, since, conn_id, fencing_token)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, nextval('cronvisor_fence'))
		ON CONFLICT (name) DO UPDATE SET job = EXCLUDED.job, host = EXCLUDED.host, pid = EXCLUDED.pid,
			supervisor_pid = EXCLUDED.supervisor_pid, run_id = EXCLUDED.run_id, slot = EXCLUDED.slot,
			since = EXCLUDED.since, conn_id = EXCLUDED.conn_id,
			fencing_token = GREATEST(EXCLUDED.fencing_token, l.fencing_token + 1)
		RETURNING fencing_token`,
		r.Name, h.Job, h.Host, h.PID, h.SupervisorPID, h.RunID, fmtTime(h.Slot), fmtTime(h.Since), r.Conn).Scan(&fence)
	return fence, err
}

// transient: anything but a server's error reply, and the replies of a
// server that is full, starting or shutting down, or whose connection
// failed.
func (postgresDialect) transient(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return true
	}
	return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P") ||
		pe.Code == "53300" || pe.Code == "40001" || pe.Code == "40P01"
}

func (postgresDialect) missingTable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42P01"
}
