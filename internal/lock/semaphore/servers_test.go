package semaphore

import (
	"testing"
	"time"

	"cronvisor/internal/harness/redistest"
	"cronvisor/internal/harness/sqltest"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/file"
	"cronvisor/internal/lock/redis"
	"cronvisor/internal/lock/sql"
)

// servers are the package's database servers.
var servers = sqltest.NewShared("s")

// redisTTL is the slots' lease in the tests: short, so that a dead
// holder's lapses soon, long enough for renewals on a loaded machine.
const redisTTL = time.Second

func redisSettings(t *testing.T) lock.Settings {
	return lock.Settings{URL: redistest.New(t).URL(), TTL: redisTTL}
}

func mariaSettings(t *testing.T) lock.Settings {
	m := servers.MariaDB(t)
	return lock.Settings{URL: m.DSN(servers.NewDB(t, m.CreateDB))}
}

func postgresSettings(t *testing.T) lock.Settings {
	p := servers.Postgres(t)
	return lock.Settings{URL: p.URL(servers.NewDB(t, p.CreateDB))}
}

func backendsUnderTest() []backend {
	return []backend{
		{"file", file.Backend, fileSettings},
		{"redis", redis.Redis, redisSettings},
		{"mysql", sql.MySQL, mariaSettings},
		{"postgres", sql.Postgres, postgresSettings},
	}
}
