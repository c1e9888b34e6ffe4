package fleet

import (
	"database/sql"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cronvisor/internal/sqltest"
)

// server is the package's PostgreSQL, started by the first test that
// needs it and stopped by TestMain: starting one takes seconds, so the
// tests share it, each in a database of its own.
var server shared

type shared struct {
	once sync.Once
	pg   *sqltest.Postgres
	err  error
	dbs  atomic.Int64
}

func TestMain(m *testing.M) {
	code := m.Run()
	if server.pg != nil {
		server.pg.Close()
	}
	os.Exit(code)
}

func postgres(t *testing.T) *sqltest.Postgres {
	t.Helper()
	server.once.Do(func() { server.pg, server.err = sqltest.StartPostgres() })
	if server.err != nil {
		t.Fatal(server.err)
	}
	return server.pg
}

// newDB creates a database of the test's own and returns its URL and an
// administrator's pool on it.
func newDB(t *testing.T) (string, *sql.DB) {
	t.Helper()
	p := postgres(t)
	name := fmt.Sprintf("t%d_%d", time.Now().UnixNano()%1e9, server.dbs.Add(1))
	if err := p.CreateDB(name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	db, err := sql.Open("pgx", p.URL(name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return p.URL(name), db
}

// openStore opens a fleet store for host on url.
func openStore(t *testing.T, url, host string) *Store {
	t.Helper()
	s, err := Open(url, host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
