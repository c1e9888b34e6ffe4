package sql

import (
	"database/sql"
	"os"
	"strings"
	"sync"
	"testing"

	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/harness/sqltest"
)

// TestMain stops the package's database servers (sqlServers) after the
// tests, and makes the test process a child subreaper as lock/file's tests
// do, so that processes orphaned by a kill are re-parented here.
func TestMain(m *testing.M) {
	locktest.BecomeSubreaper()
	code := m.Run()
	sqlServers.Close()
	os.Exit(code)
}

// sqlServers are the package's database servers.
var sqlServers = sqltest.NewShared("t")

// sqlBackend is one SQL backend under test.
type sqlBackend struct {
	name string
	// open returns a locker on a fresh database (the same one on each
	// call within a test) and an administrator's connection to it.
	open func(t *testing.T, opts ...SQLOption) (*sqlLocker, *sql.DB)
	// restart stops the server and returns the function restarting it.
	stop func(t *testing.T) (start func())
	// killConn ends session id from outside, as an operator would.
	killConn string
	// foreignLock takes the lock of full name on a raw connection, as
	// another program following the documentation would.
	foreignLock string
}

// takeForeign runs b.foreignLock on c for full.
func (b sqlBackend) takeForeign(t *testing.T, c *sql.Conn, full string) {
	t.Helper()
	args := []any{full}
	if !isPostgres(b) {
		args = []any{full, full, full, full}
	}
	var ok bool
	if err := c.QueryRowContext(t.Context(), b.foreignLock, args...).Scan(&ok); err != nil || !ok {
		t.Fatalf("foreign lock of %q: %v, %v", full, ok, err)
	}
}

func sqlBackends() []sqlBackend {
	return []sqlBackend{
		{
			name: "mysql", open: openMariaDB, stop: stopMariaDB,
			killConn:    "KILL ?",
			foreignLock: "SELECT GET_LOCK(IF(LENGTH(?) <= 64, ?, CONCAT(LEFT(?, 47), '~', LEFT(SHA2(?, 256), 16))), 0)",
		},
		{
			name: "postgres", open: openPostgres, stop: stopPostgres,
			killConn:    "SELECT pg_terminate_backend($1)",
			foreignLock: "SELECT pg_try_advisory_lock(('x' || left(encode(sha256(convert_to($1, 'UTF8')), 'hex'), 16))::bit(64)::bigint)",
		},
	}
}

func mariaDB(t *testing.T) *sqltest.MariaDB { return sqlServers.MariaDB(t) }

func postgres(t *testing.T) *sqltest.Postgres { return sqlServers.Postgres(t) }

// openMariaDB makes a database and a locker on it; further calls in the
// same test reuse the database (two supervisors on one server).
func openMariaDB(t *testing.T, opts ...SQLOption) (*sqlLocker, *sql.DB) {
	t.Helper()
	m := mariaDB(t)
	db := testDB(t, m.CreateDB)
	l, err := NewMySQLLocker(m.DSN(db), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l.sqlLocker, rawDB(t, "mysql", m.DSN(db))
}

func openPostgres(t *testing.T, opts ...SQLOption) (*sqlLocker, *sql.DB) {
	t.Helper()
	p := postgres(t)
	db := testDB(t, p.CreateDB)
	l, err := NewPostgresLocker(p.URL(db), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l.sqlLocker, rawDB(t, "pgx", p.URL(db))
}

// testDBs remembers each test's database, so its lockers share it.
var testDBs sync.Map // *testing.T -> database name

func testDB(t *testing.T, create func(string) error) string {
	t.Helper()
	if db, ok := testDBs.Load(t); ok {
		return db.(string)
	}
	db := sqlServers.NewDB(t, create)
	testDBs.Store(t, db)
	t.Cleanup(func() { testDBs.Delete(t) })
	return db
}

func rawDB(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func stopMariaDB(t *testing.T) func() {
	m := mariaDB(t)
	m.Stop()
	return func() { restart(t, m.Start) }
}

func stopPostgres(t *testing.T) func() {
	p := postgres(t)
	p.Stop()
	return func() { restart(t, p.Start) }
}

// restart brings a stopped server back; the next tests need it.
func restart(t *testing.T, start func() error) {
	t.Helper()
	if err := start(); err != nil {
		t.Fatalf("restart: %v", err)
	}
}

// eachSQL runs f for each SQL backend.
func eachSQL(t *testing.T, f func(t *testing.T, b sqlBackend)) {
	for _, b := range sqlBackends() {
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
}

func isPostgres(b sqlBackend) bool { return strings.HasPrefix(b.name, "postgres") }
