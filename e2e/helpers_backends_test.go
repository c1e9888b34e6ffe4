package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	"cronvisor/internal/harness/sqltest"
)

// sqlServers are the shared database servers of the SQL backends' tests,
// started by the first test needing each and stopped by TestMain. A test
// that stops its server starts one of its own instead (newSQLServer).
var sqlServers = sqltest.NewShared("e2e")

// dbSecret is the password every SQL test's dsn carries (through
// ${CV_E2E_DB_PASSWORD}): the test servers let any password in, and no
// log line, record or job environment may show it.
const dbSecret = "Tr0ub4dor-never-logged"

// sqlServer is one backend's server as the tests use it.
type sqlServer struct {
	kind  string // mysql or postgres
	port  int
	stop  func()
	start func() error
	// backend is the lock_backend line for database db.
	backend func(db string) string
	// prefix is the lock names' prefix on database db.
	prefix func(db string) string
	// raw opens an administrator's pool on database db.
	raw      func(db string) *sql.DB
	createDB func(string) error
	// killConn ends a session from outside.
	killConn string
}

func mariaServer(m *sqltest.MariaDB) sqlServer {
	return sqlServer{
		kind: "mysql", port: m.Port(), stop: m.Stop, start: m.Start, createDB: m.CreateDB, killConn: "KILL ?",
		// GET_LOCK's names are the server's, not the database's: each
		// test's database gets a prefix of its own, as two deployments
		// sharing a server must (docs/locking.md), or tests going on at
		// once would take each other's locks.
		prefix: func(db string) string { return db + ":" },
		backend: func(db string) string {
			return fmt.Sprintf("lock_backend: {type: mysql, dsn: 'root:${CV_E2E_DB_PASSWORD}@tcp(127.0.0.1:%d)/%s', prefix: '%s:'}", m.Port(), db, db)
		},
		raw: func(db string) *sql.DB { d, _ := sql.Open("mysql", m.DSN(db)); return d },
	}
}

func pgServer(p *sqltest.Postgres) sqlServer {
	return sqlServer{
		kind: "postgres", port: p.Port(), stop: p.Stop, start: p.Start, createDB: p.CreateDB, killConn: "SELECT pg_terminate_backend($1)",
		prefix: func(string) string { return "cronvisor:" }, // advisory keys are the database's
		backend: func(db string) string {
			return fmt.Sprintf("lock_backend: {type: postgres, url: 'postgres://postgres:${CV_E2E_DB_PASSWORD}@127.0.0.1:%d/%s?sslmode=disable'}", p.Port(), db)
		},
		raw: func(db string) *sql.DB { d, _ := sql.Open("pgx", p.URL(db)); return d },
	}
}

// sharedSQLServer is the shared server of kind.
func sharedSQLServer(t *testing.T, kind string) sqlServer {
	t.Helper()
	if kind == "mysql" {
		return mariaServer(sqlServers.MariaDB(t))
	}
	return pgServer(sqlServers.Postgres(t))
}

// newSQLServer is a server of kind for this test alone, closed when it
// ends.
func newSQLServer(t *testing.T, kind string) sqlServer {
	t.Helper()
	if kind == "mysql" {
		m, err := sqltest.StartMariaDB()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Close)
		return mariaServer(m)
	}
	p, err := sqltest.StartPostgres()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return pgServer(p)
}

// newDB creates a database for the test and returns its name and an
// administrator's pool on it.
func (s sqlServer) newDB(t *testing.T) (string, *sql.DB) {
	t.Helper()
	name := sqlServers.NewDB(t, s.createDB)
	db := s.raw(name)
	t.Cleanup(func() { _ = db.Close() })
	return name, db
}

// holderConn is the server session id in the record of lock on database
// dbName.
func holderConn(t *testing.T, db *sql.DB, s sqlServer, dbName, lock string) int64 {
	t.Helper()
	q := "SELECT conn_id FROM cronvisor_locks WHERE name = ?"
	if s.kind == "postgres" {
		q = "SELECT conn_id FROM cronvisor_locks WHERE name = $1"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var id int64
	if err := db.QueryRowContext(ctx, q, s.prefix(dbName)+lock).Scan(&id); err != nil {
		t.Fatalf("read %s's holder connection: %v", lock, err)
	}
	return id
}

// sqlKinds runs f as a parallel subtest per SQL backend, the test itself
// in parallel with the others.
func sqlKinds(t *testing.T, f func(t *testing.T, kind string)) {
	t.Parallel()
	for _, kind := range []string{"mysql", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f(t, kind)
		})
	}
}

// sqlSandbox is one "host" on the database db of s.
func sqlSandbox(t *testing.T, s sqlServer, db, jobs string) *sandbox {
	t.Helper()
	_ = os.Setenv("CV_E2E_DB_PASSWORD", dbSecret) // the same for every test; sandboxes pass it on
	return newSandbox(t, s.backend(db)+"\nshutdown_grace: 3s\n"+jobs)
}

// redisSandbox is one "host": its own directory, jobs.yaml and state dir,
// sharing a Redis with the others.
func redisSandbox(t *testing.T, url, jobs string) *sandbox {
	t.Helper()
	return newSandbox(t, fmt.Sprintf("lock_backend: {type: redis, url: %q, ttl: 2s}\nshutdown_grace: 3s\n%s", url, jobs))
}
