package semaphore

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cronvisor/internal/harness/redistest"
	"cronvisor/internal/harness/sqltest"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/file"
	"cronvisor/internal/lock/redis"
	"cronvisor/internal/lock/sql"
)

// servers are the package's database servers, started by the first test
// that needs each and stopped by TestMain: starting them takes seconds,
// so the tests share them, each in a database of its own.
var servers dbServers

type dbServers struct {
	mariaOnce, pgOnce sync.Once
	maria             *sqltest.MariaDB
	pg                *sqltest.Postgres
	mariaErr, pgErr   error
	dbs               atomic.Int64
}

func (s *dbServers) close() {
	if s.maria != nil {
		s.maria.Close()
	}
	if s.pg != nil {
		s.pg.Close()
	}
}

// dbName is a database name of the test's own.
func dbName() string { return fmt.Sprintf("s%d_%d", time.Now().UnixNano()%1e9, servers.dbs.Add(1)) }

// redisTTL is the slots' lease in the tests: short, so that a dead
// holder's lapses soon, long enough for renewals on a loaded machine.
const redisTTL = time.Second

func redisSettings(t *testing.T) lock.Settings {
	return lock.Settings{URL: redistest.New(t).URL(), TTL: redisTTL}
}

func mariaSettings(t *testing.T) lock.Settings {
	s := &servers
	s.mariaOnce.Do(func() { s.maria, s.mariaErr = sqltest.StartMariaDB() })
	if s.mariaErr != nil {
		t.Fatal(s.mariaErr)
	}
	db := dbName()
	if err := s.maria.CreateDB(db); err != nil {
		t.Fatal(err)
	}
	return lock.Settings{URL: s.maria.DSN(db)}
}

func postgresSettings(t *testing.T) lock.Settings {
	s := &servers
	s.pgOnce.Do(func() { s.pg, s.pgErr = sqltest.StartPostgres() })
	if s.pgErr != nil {
		t.Fatal(s.pgErr)
	}
	db := dbName()
	if err := s.pg.CreateDB(db); err != nil {
		t.Fatal(err)
	}
	return lock.Settings{URL: s.pg.URL(db)}
}

func backendsUnderTest() []backend {
	return []backend{
		{"file", file.Backend, fileSettings},
		{"redis", redis.Redis, redisSettings},
		{"mysql", sql.MySQL, mariaSettings},
		{"postgres", sql.Postgres, postgresSettings},
	}
}
