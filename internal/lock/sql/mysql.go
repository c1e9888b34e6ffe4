package sql

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"

	"cronvisor/internal/base/mask"
	"cronvisor/internal/lock"
)

// MySQLNameLimit is the longest lock name MySQL's GET_LOCK takes.
const MySQLNameLimit = 64

// MySQLLocker is the MySQL (and MariaDB) backend: `GET_LOCK(name, 0)` on a
// connection pinned to the lease, `RELEASE_LOCK(name)` on the same one.
// See NewMySQLLocker for what it promises and where it stops.
type MySQLLocker struct{ *sqlLocker }

var _ lock.Locker = (*MySQLLocker)(nil)

// MySQLLockName is the name GET_LOCK is given for full (prefix + lock
// name): full itself up to MySQLNameLimit characters, else its first 47
// characters, "~" and the first 16 hex digits of its SHA-256, which any
// program can compute in SQL as
//
//	CONCAT(LEFT(n, 47), '~', LEFT(SHA2(n, 256), 16))
func MySQLLockName(full string) string {
	if len(full) <= MySQLNameLimit {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	return full[:47] + "~" + hex.EncodeToString(sum[:])[:16]
}

// NewMySQLLocker returns a locker on the server of dsn (the driver's
// user:pass@tcp(host:port)/db form; see mysql.ParseDSN). It does not
// connect: an unreachable server makes each Acquire fail with
// ErrUnavailable until it is back. Unset dial, read and write timeouts
// default to 1 s so that a fire is skipped quickly.
//
// What it promises: while the server stays up, at most one session holds
// a lock name, so at most one supervisor runs under it; a job runs at
// most once per slot across all supervisors on the database; a run whose
// lock's connection is killed or breaks is told within 2×KeepAlive (Lost
// closes) and, its supervisor dying, ended at once by its guard: the
// server frees the lock the moment the session ends.
//
// Where it stops: named locks are not replicated, so a failover to a
// replica starts with every lock free while old holders may still run
// (their leases are lost when their connections drop, and their runs
// ended, but the new primary may already have granted the lock); the
// slot claims and fencing tokens, being rows, survive a failover that
// kept them. A proxy that multiplexes sessions (ProxySQL without
// session pinning, a pooler in transaction mode) breaks session locks.
func NewMySQLLocker(dsn string, opts ...SQLOption) (*MySQLLocker, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("lock backend: invalid mysql dsn: %v", mask.Error(err, dsn))
	}
	for _, d := range []*time.Duration{&cfg.Timeout, &cfg.ReadTimeout, &cfg.WriteTimeout} {
		if *d == 0 {
			*d = time.Second
		}
	}
	// The driver would print I/O errors ("unexpected EOF") to stderr, in
	// the middle of the daemon's structured log; ours say it with context.
	cfg.Logger = log.New(io.Discard, "", 0)
	d := mysqlDialect{addr: cfg.Addr, user: cfg.User, db: cfg.DBName, conns: newMySQLConns()}
	if cfg.DialFunc == nil {
		cfg.DialFunc = d.conns.dial
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("lock backend: invalid mysql dsn: %v", mask.Error(err, dsn))
	}
	l, err := newSQLLocker(sql.OpenDB(conn), d, MySQLLockName, opts)
	if err != nil {
		return nil, err
	}
	return &MySQLLocker{l}, nil
}

// mysqlDialect speaks MySQL and MariaDB as user on database db; conns
// knows the local address of each of its connections.
type mysqlDialect struct {
	addr, user, db string
	conns          *mysqlConns
}

func (d mysqlDialect) server() string { return "mysql at " + d.addr }

func (mysqlDialect) schema() []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS cronvisor_locks (
			name VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
			job VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
			host VARCHAR(255) NOT NULL, pid BIGINT NOT NULL, supervisor_pid BIGINT NOT NULL,
			run_id VARCHAR(100) NOT NULL, slot VARCHAR(40) NOT NULL, since VARCHAR(40) NOT NULL,
			conn_id BIGINT NOT NULL, fencing_token BIGINT NOT NULL) ENGINE=InnoDB`,
		`CREATE TABLE IF NOT EXISTS cronvisor_slots (
			name VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
			job VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
			slot_ns BIGINT NOT NULL, run_id VARCHAR(100) NOT NULL, host VARCHAR(255) NOT NULL,
			since VARCHAR(40) NOT NULL, fencing_token BIGINT NOT NULL DEFAULT 0,
			outcome VARCHAR(20) NOT NULL DEFAULT '', through_ns BIGINT NOT NULL DEFAULT 0,
			PRIMARY KEY (name, job, slot_ns)) ENGINE=InnoDB`,
	}
}

// ledgerColumns, as in schema's CREATE TABLE: a row claimed by a
// cronvisor from before the ledger has token 0 and an empty outcome.
// MySQL has no ADD COLUMN IF NOT EXISTS (MariaDB has): addLedgerColumns
// looks first.
func (mysqlDialect) ledgerColumns() [][2]string {
	return [][2]string{
		{"fencing_token", "BIGINT NOT NULL DEFAULT 0"},
		{"outcome", "VARCHAR(20) NOT NULL DEFAULT ''"},
		{"through_ns", "BIGINT NOT NULL DEFAULT 0"},
	}
}

func (mysqlDialect) currentSchema() string { return "DATABASE()" }

// lockLedger: MySQL has no transaction-scoped named lock (GET_LOCK is the
// session's, and the pool's connection would keep it past the
// transaction); two claims of the same slot are kept apart by the
// primary key, and a missed claim racing a fire of a later slot is not
// ordered (see docs/locking.md).
func (mysqlDialect) lockLedger(context.Context, *sql.Tx, string) error { return nil }

// missedFence: MySQL has no sequence; a lease's token is its lock's own
// count, which a missed claim, taking no lock, does not draw from.
func (mysqlDialect) missedFence(context.Context, *sql.Tx) (int64, error) { return 0, nil }

func (mysqlDialect) duplicate(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1062
}

func (mysqlDialect) rebind(q string) string { return q }

func (mysqlDialect) tryLock(ctx context.Context, c *sql.Conn, key string) (bool, error) {
	var got sql.NullInt64 // NULL: an error such as the session being killed
	if err := c.QueryRowContext(ctx, `SELECT GET_LOCK(?, 0)`, key).Scan(&got); err != nil {
		return false, err
	}
	if !got.Valid {
		return false, errors.New("GET_LOCK returned NULL")
	}
	return got.Int64 == 1, nil
}

func (mysqlDialect) unlock(ctx context.Context, c *sql.Conn, key string) error {
	var r sql.NullInt64
	return c.QueryRowContext(ctx, `SELECT RELEASE_LOCK(?)`, key).Scan(&r)
}

func (mysqlDialect) stillHeld(ctx context.Context, c *sql.Conn, key string) (bool, error) {
	var ok bool
	err := c.QueryRowContext(ctx, `SELECT COALESCE(IS_USED_LOCK(?) = CONNECTION_ID(), 0)`, key).Scan(&ok)
	return ok, err
}

// session is the connection id and, from the server's greeting when the
// connection was dialled (see mysqlConns), its local address: the process
// list names a client's port only where grants are checked and no
// proxy stands between, and asking it costs a round trip.
func (d mysqlDialect) session(ctx context.Context, c *sql.Conn) (sessionID, error) {
	var s sessionID
	if err := c.QueryRowContext(ctx, `SELECT CONNECTION_ID()`).Scan(&s.ID); err != nil {
		return s, err
	}
	if dc, ok := d.conns.conn(s.ID); ok {
		s.Port = int(dc.local.Port())
		s.Addr = dc.local.Addr().Unmap().String() + ":" + strconv.Itoa(s.Port) // as PROCESSLIST.HOST shows it
	}
	return s, nil
}

// socket is the connection the server greeted as s.ID.
func (d mysqlDialect) socket(_ *sql.Conn, s sessionID) *os.File {
	if dc, ok := d.conns.conn(s.ID); ok {
		return socketOf(dc.conn)
	}
	return nil
}

// endStale kills the connection only if the process list still shows it
// as the lost one, user and "ip:port" (an empty host, as a server
// started with --skip-grant-tables shows, passes), holding our lock: a
// connection id the server gave anew after a restart holds none of
// ours.
func (d mysqlDialect) endStale(ctx context.Context, q querier, s staleSession) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.PROCESSLIST
		WHERE ID = ? AND USER = ? AND (HOST = ? OR HOST = '') AND IS_USED_LOCK(?) = ID`,
		s.ID, d.user, s.Addr, s.key).Scan(&n)
	if err != nil || n == 0 {
		return false, err
	}
	_, err = q.ExecContext(ctx, "KILL CONNECTION "+strconv.FormatInt(s.ID, 10))
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1094 { // unknown thread: it ended meanwhile
		return false, nil
	}
	return err == nil, err
}

// mayBeClaiming: nothing a MySQL session shows tells cronvisor's apart
// (connection attributes need performance_schema, off by default on
// MariaDB), so every holder without a record is waited for.
func (mysqlDialect) mayBeClaiming(context.Context, querier, int64) bool { return true }

// owner asks IS_USED_LOCK, which names the holding connection whatever
// performance_schema is set to.
func (mysqlDialect) owner(ctx context.Context, q querier, key string) (int64, bool, error) {
	var id sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT IS_USED_LOCK(?)`, key).Scan(&id)
	return id.Int64, id.Valid, err
}

// describe reads the session from information_schema.PROCESSLIST; a user
// without the PROCESS privilege sees only its own sessions there, and
// then only the connection id is known. A session on another database
// is said to be: GET_LOCK's names are the server's, so a cronvisor there
// with the same prefix takes the same locks but keeps its records in
// its own tables, where this one cannot read them.
func (d mysqlDialect) describe(ctx context.Context, q querier, id int64) string {
	s := fmt.Sprintf("mysql connection %d", id)
	var user, host, db sql.NullString
	err := q.QueryRowContext(ctx, `SELECT USER, HOST, DB FROM information_schema.PROCESSLIST WHERE ID = ?`, id).
		Scan(&user, &host, &db)
	if err != nil {
		return s
	}
	s += ": user " + user.String
	if host.String != "" {
		s += " from " + host.String
	}
	if db.Valid && db.String != d.db {
		s += " on database " + db.String + "; lock names are the server's: give each database's cronvisor a prefix of its own"
	}
	return s
}

func (mysqlDialect) upsertRecord(ctx context.Context, tx *sql.Tx, r sqlRecord) (int64, error) {
	h := r.H
	_, err := tx.ExecContext(ctx, `INSERT INTO cronvisor_locks
		(name, job, host, pid, supervisor_pid, run_id, slot, since, conn_id, fencing_token)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
		ON DUPLICATE KEY UPDATE job = VALUES(job), host = VALUES(host), pid = VALUES(pid),
			supervisor_pid = VALUES(supervisor_pid), run_id = VALUES(run_id), slot = VALUES(slot),
			since = VALUES(since), conn_id = VALUES(conn_id), fencing_token = fencing_token + 1`,
		r.Name, h.Job, h.Host, h.PID, h.SupervisorPID, h.RunID, fmtTime(h.Slot), fmtTime(h.Since), r.Conn)
	if err != nil {
		return 0, err
	}
	var fence int64
	err = tx.QueryRowContext(ctx, `SELECT fencing_token FROM cronvisor_locks WHERE name = ?`, r.Name).Scan(&fence)
	return fence, err
}

// transient: anything but a server's error reply, and the replies of a
// server that is full or shutting down.
func (mysqlDialect) transient(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return true
	}
	switch me.Number {
	case 1040, 1053, 1203, 1205, 1213, 1927: // too many connections, shutdown, user's connections, lock wait, deadlock, killed
		return true
	}
	return false
}

func (mysqlDialect) missingTable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1146
}
