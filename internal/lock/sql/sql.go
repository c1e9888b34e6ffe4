package sql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
)

// Defaults of the SQL backends (MySQLLocker, PostgresLocker).
const (
	// DefaultSQLPrefix starts every lock name the SQL backends take on the
	// server and every row they write, so several installations can share
	// one database.
	DefaultSQLPrefix = "cronvisor:"
	// DefaultKeepAlive is how often a held lock's pinned connection is
	// checked; each check must answer within the same time. A lock lost
	// behind our back (the connection killed or broken, the server gone)
	// is therefore declared lost within twice this long.
	DefaultKeepAlive = time.Second
)

// ErrSessionMoved means the statement after taking a session lock ran on
// a session that does not hold it: a connection pooler in transaction or
// statement mode stands between cronvisor and the server.
var ErrSessionMoved = errors.New("the database session changed between two statements on one connection " +
	"(a pooler in transaction mode, such as PgBouncer's pool_mode=transaction?): session locks cannot work through it")

// sqlDialect is what differs between the SQL servers: how a session lock
// is taken, checked and given up, who holds one, and the SQL text of the
// record writes. Every method that takes a *sql.Conn runs on that one
// connection; the lock belongs to it.
type sqlDialect interface {
	// server names the backend and its address for messages; never the
	// password.
	server() string
	// schema is the CREATE TABLE IF NOT EXISTS statements of the holder
	// records and slot claims.
	schema() []string
	// tryLock takes the session lock of key without waiting.
	tryLock(ctx context.Context, c *sql.Conn, key string) (bool, error)
	// unlock gives it up.
	unlock(ctx context.Context, c *sql.Conn, key string) error
	// stillHeld reports whether c's session holds the lock.
	stillHeld(ctx context.Context, c *sql.Conn, key string) (bool, error)
	// session tells c's server session apart from any other (see
	// sessionID).
	session(ctx context.Context, c *sql.Conn) (sessionID, error)
	// socket is a duplicate of the socket under c, session s (see
	// socketOf), nil if it cannot be had.
	socket(c *sql.Conn, s sessionID) *os.File
	// endStale ends the stale session s if it is still there and still
	// the one this locker lost (see staleSession): ended is false when it
	// is gone or not that session; an error means the server could not
	// be asked.
	endStale(ctx context.Context, q querier, s staleSession) (ended bool, err error)
	// owner is the session id holding the lock, false when it is free.
	owner(ctx context.Context, q querier, key string) (int64, bool, error)
	// mayBeClaiming reports whether session id, holding a lock whose
	// record another session wrote, may be a cronvisor about to write
	// its own (see holderOf).
	mayBeClaiming(ctx context.Context, q querier, id int64) bool
	// describe tells who a foreign session is, for Holder.Cmdline.
	describe(ctx context.Context, q querier, id int64) string
	// upsertRecord writes a lock's record and bumps its fencing token;
	// it is run in a transaction holding the lock.
	upsertRecord(ctx context.Context, tx *sql.Tx, r sqlRecord) (int64, error)
	// ledgerColumns are the slot ledger's columns of cronvisor_slots
	// (name, then its type and default), added to a table created before
	// them (see addLedgerColumns).
	ledgerColumns() [][2]string
	// currentSchema is the SQL naming the schema (database) the tables
	// are in, for information_schema.
	currentSchema() string
	// lockLedger makes tx wait for every other transaction claiming slots
	// of the lock full (the ledger's order), where the server offers a
	// transaction-scoped lock; a no-op elsewhere (the primary key alone
	// then keeps two claims of one slot apart).
	lockLedger(ctx context.Context, tx *sql.Tx, full string) error
	// missedFence is the fencing token of a missed claim's row: drawn as
	// a lease's is, where tokens come from a sequence; else 0.
	missedFence(ctx context.Context, tx *sql.Tx) (int64, error)
	// duplicate reports a unique key violation.
	duplicate(err error) bool
	// rebind turns the '?' placeholders of a query into the server's.
	rebind(q string) string
	// missingTable reports an error about a table that does not exist.
	missingTable(err error) bool
	// transient reports server errors that mean "not now" (too many
	// connections, starting up) rather than a mistake.
	transient(err error) bool
}

// ListIsPartial implements PartialLister.
func (l *sqlLocker) ListIsPartial() bool { return true }

// querier is a *sql.DB, *sql.Conn or *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// sqlLocker is the shared body of the SQL backends: a lock is a session
// lock of the server, taken and held on one connection pinned for the
// lease's whole life, with a row in cronvisor_locks naming its holder and
// rows in cronvisor_slots claiming the slots run under it.
type sqlLocker struct {
	db        *sql.DB
	d         sqlDialect
	prefix    string
	keepAlive time.Duration
	retention time.Duration
	host      string
	serverKey func(full string) string // the name or number the server locks

	schemaMu sync.Mutex
	schemaOK bool

	// held are this locker's unreleased leases by lock name. The server
	// frees a lock the moment its session dies, before the keep-alive
	// notices: a fire of this supervisor in between is refused here, so
	// it never starts a run beside its own.
	held lock.OwnLeases[*sqlLease]

	// stale are the sessions of leases lost to a silent connection,
	// which this locker ends once the server answers again.
	stale reaper
	// outcomes retries the slot outcomes whose write failed.
	outcomes *outcomeRetrier
}

// SQLOption configures a MySQLLocker or PostgresLocker.
type SQLOption func(*sqlLocker)

// WithSQLPrefix replaces DefaultSQLPrefix.
func WithSQLPrefix(p string) SQLOption { return func(l *sqlLocker) { l.prefix = p } }

// WithKeepAlive replaces DefaultKeepAlive.
func WithKeepAlive(d time.Duration) SQLOption { return func(l *sqlLocker) { l.keepAlive = d } }

func newSQLLocker(db *sql.DB, d sqlDialect, serverKey func(string) string, opts []SQLOption) (*sqlLocker, error) {
	l := &sqlLocker{db: db, d: d, prefix: DefaultSQLPrefix, keepAlive: DefaultKeepAlive,
		retention: lock.DefaultRetention, serverKey: serverKey, held: lock.NewOwnLeases[*sqlLease](),
		stale: newReaper(), outcomes: newOutcomeRetrier()}
	for _, o := range opts {
		o(l)
	}
	if l.keepAlive < 10*time.Millisecond {
		return nil, fmt.Errorf("lock backend: keep-alive %s is too short", l.keepAlive)
	}
	if !lock.ValidName(strings.TrimSuffix(l.prefix, ":")) && l.prefix != "" {
		return nil, fmt.Errorf("%w: prefix %q: use letters, digits, '_', '.', '-' and a final ':'", lock.ErrBadName, l.prefix)
	}
	l.host = lock.LocalHost()
	// Idle connections are only the ones Inspect and List used: a lease's
	// connection is closed, never pooled, once it has held a lock.
	db.SetMaxIdleConns(2)
	return l, nil
}

// Close stops ending stale sessions and retrying slot outcomes, and
// closes the pool. Leases still held lose their locks.
func (l *sqlLocker) Close() error {
	l.stale.close()
	l.outcomes.close()
	return l.db.Close()
}

// KeepAlive is how often a held lock's connection is checked.
func (l *sqlLocker) KeepAlive() time.Duration { return l.keepAlive }

// sqlRecord is one row of cronvisor_locks.
type sqlRecord struct {
	Name  string // prefix + lock name
	H     lock.Record
	Conn  int64 // the session holding the lock when written
	Fence int64
}

// lock.OpTimeout bounds each step of an acquisition, like the Redis backend's.
func (l *sqlLocker) opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, lock.OpTimeout)
}

// ensureSchema creates the tables once per locker; a failure is retried
// at the next call.
func (l *sqlLocker) ensureSchema(ctx context.Context) error {
	l.schemaMu.Lock()
	defer l.schemaMu.Unlock()
	if l.schemaOK {
		return nil
	}
	ctx, cancel := l.opCtx(ctx)
	defer cancel()
	for _, stmt := range l.d.schema() {
		_, err := l.db.ExecContext(ctx, stmt)
		if err != nil && ctx.Err() == nil {
			// Two supervisors creating the same table at once: one of
			// PostgreSQL's CREATE TABLE IF NOT EXISTS may fail; the
			// second try sees the table.
			_, err = l.db.ExecContext(ctx, stmt)
		}
		if err != nil {
			return l.wrap(ctx, "create the lock tables", err)
		}
	}
	if err := l.addLedgerColumns(ctx); err != nil {
		return l.wrap(ctx, "add the slot ledger's columns", err)
	}
	l.schemaOK = true
	return nil
}

// wrap says what failed and where; errors that mean the server cannot
// serve us now match ErrUnavailable. The caller's cancellation passes as
// it is.
func (l *sqlLocker) wrap(caller context.Context, what string, err error) error {
	if cerr := caller.Err(); cerr != nil {
		return cerr
	}
	if l.d.missingTable(err) { // dropped, or a database restored without them
		l.schemaMu.Lock()
		l.schemaOK = false
		l.schemaMu.Unlock()
	}
	if l.d.transient(err) && !errors.Is(err, ErrSessionMoved) { // that one is a setup to fix
		// One line: pgx lists each address it tried on a line of its own.
		msg := strings.NewReplacer(":\n\t", ": ", "\n\t", "; ", "\n", "; ").Replace(err.Error())
		return fmt.Errorf("%s: %w: %s: %s", what, lock.ErrUnavailable, l.d.server(), msg)
	}
	return fmt.Errorf("%s: %s: %w", what, l.d.server(), err)
}

// checkName refuses names the tables and keys cannot carry.
func checkName(name string) error {
	if !lock.ValidName(name) || len(name) > 200 {
		return fmt.Errorf("%w %q: use up to 200 letters, digits, '_', '.' and '-'", lock.ErrBadName, name)
	}
	return nil
}

const sqlTimeLayout = time.RFC3339Nano

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(sqlTimeLayout)
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(sqlTimeLayout, s)
	return t
}

// readRecord reads a lock's row; false when there is none.
func (l *sqlLocker) readRecord(ctx context.Context, q querier, full string) (sqlRecord, bool, error) {
	r := sqlRecord{Name: full}
	var slot, since string
	err := q.QueryRowContext(ctx, l.d.rebind(`SELECT job, host, pid, supervisor_pid, run_id, slot, since, conn_id, fencing_token
		FROM cronvisor_locks WHERE name = ?`), full).
		Scan(&r.H.Job, &r.H.Host, &r.H.PID, &r.H.SupervisorPID, &r.H.RunID, &slot, &since, &r.Conn, &r.Fence)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, err
	}
	r.H.Slot, r.H.Since = parseTime(slot), parseTime(since)
	return r, true, nil
}

// holderOf is who holds a lock whose server key is owned by session id:
// the record when that session wrote it, else a foreign holder.
func (l *sqlLocker) holderOf(ctx context.Context, q querier, full string, id int64) (lock.Record, error) {
	r, ok, err := l.readRecord(ctx, q, full)
	if err != nil {
		return lock.Record{}, err
	}
	if ok && r.Conn == id {
		return r.H, nil
	}
	return lock.Record{Holder: run.Holder{Foreign: true, PID: int(id), Cmdline: l.d.describe(ctx, q, id)}}, nil
}

// Inspect reports one lock without touching it: held when some session
// owns its server key (the record's holder if that session wrote it,
// else a foreign holder), otherwise free with its last record.
func (l *sqlLocker) Inspect(ctx context.Context, name string) (lock.Status, error) {
	if err := checkName(name); err != nil {
		return lock.Status{}, err
	}
	if err := l.ensureSchema(ctx); err != nil {
		return lock.Status{}, err
	}
	opCtx, cancel := l.opCtx(ctx)
	defer cancel()
	full := l.prefix + name
	st := lock.Status{Name: name}
	id, held, err := l.d.owner(opCtx, l.db, l.serverKey(full))
	if err != nil {
		return st, l.wrap(ctx, fmt.Sprintf("lock %q", name), err)
	}
	if held {
		st.Held = true
		st.Record, err = l.holderOf(opCtx, l.db, full, id)
	} else {
		var r sqlRecord
		r, _, err = l.readRecord(opCtx, l.db, full)
		st.Record = r.H
	}
	if err != nil {
		return st, l.wrap(ctx, fmt.Sprintf("lock %q", name), err)
	}
	return st, nil
}

// List reports every lock with a record under this prefix, sorted by
// name. A foreign session holding a lock cronvisor never took has no
// record; Inspect of that name finds it.
func (l *sqlLocker) List(ctx context.Context) ([]lock.Status, error) {
	if err := l.ensureSchema(ctx); err != nil {
		return nil, err
	}
	opCtx, cancel := l.opCtx(ctx)
	rows, err := l.db.QueryContext(opCtx, l.d.rebind(`SELECT name FROM cronvisor_locks
		WHERE name LIKE ? ORDER BY name`), likePrefix(l.prefix))
	if err != nil {
		cancel()
		return nil, l.wrap(ctx, "list locks", err)
	}
	var names []string
	for rows.Next() {
		var full string
		if rows.Scan(&full) == nil && strings.HasPrefix(full, l.prefix) {
			names = append(names, strings.TrimPrefix(full, l.prefix))
		}
	}
	err = rows.Err()
	rows.Close()
	cancel()
	if err != nil {
		return nil, l.wrap(ctx, "list locks", err)
	}
	return lock.InspectAll(ctx, names, l.Inspect)
}

// likePrefix is a LIKE pattern matching names that start with p.
func likePrefix(p string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(p) + "%"
}

// rebindDollar turns '?' into $1, $2 ... (PostgreSQL); the queries here
// have no '?' inside literals.
func rebindDollar(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
