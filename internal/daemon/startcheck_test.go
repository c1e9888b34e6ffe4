package daemon

import (
	"fmt"
	"io"
	"testing"
	"time"

	"cronvisor/internal/config"
	"cronvisor/internal/store/fleet"
)

// TestLoadRefusesWhatStartRefuses: a lock or history backend's address
// (and a lock backend's ttl and prefix) passes config.Load (what validate
// runs) exactly when the daemon's start takes it (NewLocker, fleet.Open):
// no file validates and then stops the daemon, and none is refused that
// it would take.
func TestLoadRefusesWhatStartRefuses(t *testing.T) {
	cases := []struct {
		kind, addr string
		ttl        time.Duration
		prefix     string
	}{
		{kind: "postgres", addr: "postgres://u:pw@127.0.0.1:5432/db"},
		{kind: "postgres", addr: "postgres://u:pw@127.0.0.1:5432/db?sslmode=bogus"},
		{kind: "postgres", addr: "postgres://u:pw@127.0.0.1:5432/db?sslmode=require&connect_timeout=x"},
		{kind: "postgres", addr: "postgres://u:pw@127.0.0.1:99999/db"},
		{kind: "redis", addr: "redis://:pw@127.0.0.1:6379/0"},
		{kind: "redis", addr: "redis://127.0.0.1:6379/abc"},
		{kind: "redis", addr: "redis://127.0.0.1:6379/0?nosuch=1"},
		{kind: "redis", addr: "redis://127.0.0.1:6379/0?dial_timeout=soon"},
		{kind: "mysql", addr: "u:pw@tcp(127.0.0.1:3306)/db"},
		{kind: "mysql", addr: "u:pw@tcp(127.0.0.1:3306)/db?parseTime=maybe"},
		{kind: "mysql", addr: "u:pw@127.0.0.1/db"},
		{kind: "history", addr: "postgres://u:pw@127.0.0.1:5432/db?sslmode=verify-full"},
		{kind: "history", addr: "postgres://u:pw@127.0.0.1:5432/db?sslmode=bogus"},
		{kind: "redis", addr: "redis://127.0.0.1:6379/0", ttl: 7 * 24 * time.Hour},
		{kind: "redis", addr: "redis://127.0.0.1:6379/0", ttl: 8 * 24 * time.Hour},
		{kind: "redis", addr: "redis://127.0.0.1:6379/0", prefix: "a:b"},
		{kind: "postgres", addr: "postgres://u@127.0.0.1/db", prefix: "app.cron:"},
		{kind: "postgres", addr: "postgres://u@127.0.0.1/db", prefix: "a:b"},
		{kind: "mysql", addr: "u@tcp(127.0.0.1:3306)/db", prefix: ":"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s %s ttl %v prefix %q", c.kind, c.addr, c.ttl, c.prefix), func(t *testing.T) {
			if c.ttl == 0 {
				c.ttl = config.DefaultLockTTL
			}
			extra := ""
			if c.kind == "redis" {
				extra = fmt.Sprintf(", ttl: %v", c.ttl)
			}
			if c.prefix != "" {
				extra += fmt.Sprintf(", prefix: '%s'", c.prefix)
			}
			src := "jobs: []\n"
			switch c.kind {
			case "history":
				src += "history_backend: {type: postgres, url: '" + c.addr + "'}\n"
			case "mysql":
				src += "lock_backend: {type: mysql, dsn: '" + c.addr + "'" + extra + "}\n"
			default:
				src += "lock_backend: {type: " + c.kind + ", url: '" + c.addr + "'" + extra + "}\n"
			}
			loaded, problems := config.Parse("jobs.yaml", []byte(src))
			startErr := start(c.kind, c.addr, c.ttl, c.prefix)
			if (loaded != nil) != (startErr == nil) {
				t.Fatalf("config.Load says %v; the daemon's start says %v: they must agree", problems, startErr)
			}
		})
	}
}

// start builds what the daemon's start builds from a backend's address,
// without connecting, and closes it.
func start(kind, addr string, ttl time.Duration, prefix string) error {
	if kind == "history" {
		s, err := fleet.Open(addr, "host")
		if err == nil {
			_ = s.Close()
		}
		return err
	}
	cfg := &config.Config{LockBackend: config.LockBackend{Type: kind, URL: addr, TTL: ttl, Prefix: prefix}}
	l, err := NewLocker(cfg)
	if c, ok := l.(io.Closer); ok && err == nil {
		_ = c.Close()
	}
	return err
}
