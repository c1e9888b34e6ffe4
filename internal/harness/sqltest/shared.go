package sqltest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Shared is a test package's database servers: each is started by the
// first test that needs it and stopped by the package's TestMain
// (Close). Starting one takes seconds, so the tests share them, each in
// a database of its own (NewDB).
type Shared struct {
	prefix            string // of the databases' names
	mariaOnce, pgOnce sync.Once
	maria             *MariaDB
	pg                *Postgres
	mariaErr, pgErr   error
	dbs               atomic.Int64
}

// NewShared returns a package's servers, none started yet; the names of
// its databases start with prefix (a letter: SQL names cannot start with
// a digit).
func NewShared(prefix string) *Shared { return &Shared{prefix: prefix} }

// MariaDB is the package's MariaDB server, started by its first caller.
func (s *Shared) MariaDB(t testing.TB) *MariaDB {
	t.Helper()
	s.mariaOnce.Do(func() { s.maria, s.mariaErr = StartMariaDB() })
	if s.mariaErr != nil {
		t.Fatal(s.mariaErr)
	}
	return s.maria
}

// Postgres is the package's PostgreSQL server, started by its first
// caller.
func (s *Shared) Postgres(t testing.TB) *Postgres {
	t.Helper()
	s.pgOnce.Do(func() { s.pg, s.pgErr = StartPostgres() })
	if s.pgErr != nil {
		t.Fatal(s.pgErr)
	}
	return s.pg
}

// NewDB creates a database of the caller's own with create (a server's
// CreateDB) and returns its name.
func (s *Shared) NewDB(t testing.TB, create func(name string) error) string {
	t.Helper()
	name := fmt.Sprintf("%s%d_%d", s.prefix, time.Now().UnixNano()%1e9, s.dbs.Add(1))
	if err := create(name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	return name
}

// Close stops the servers started; for TestMain, after the tests.
func (s *Shared) Close() {
	if s.maria != nil {
		s.maria.Close()
	}
	if s.pg != nil {
		s.pg.Close()
	}
}
