package daemon

import (
	"io"
	"testing"
	"time"

	"cronvisor/config"
	"cronvisor/fleet"
)

// TestLoadRefusesWhatStartRefuses: a lock or history backend's address
// passes config.Load (what validate runs) exactly when the daemon's
// start takes it (NewLocker, fleet.Open): no file validates and then
// stops the daemon, and none is refused that it would take.
func TestLoadRefusesWhatStartRefuses(t *testing.T) {
	cases := []struct{ kind, addr string }{
		{"postgres", "postgres://u:pw@127.0.0.1:5432/db"},
		{"postgres", "postgres://u:pw@127.0.0.1:5432/db?sslmode=bogus"},
		{"postgres", "postgres://u:pw@127.0.0.1:5432/db?sslmode=require&connect_timeout=x"},
		{"postgres", "postgres://u:pw@127.0.0.1:99999/db"},
		{"redis", "redis://:pw@127.0.0.1:6379/0"},
		{"redis", "redis://127.0.0.1:6379/abc"},
		{"redis", "redis://127.0.0.1:6379/0?nosuch=1"},
		{"redis", "redis://127.0.0.1:6379/0?dial_timeout=soon"},
		{"mysql", "u:pw@tcp(127.0.0.1:3306)/db"},
		{"mysql", "u:pw@tcp(127.0.0.1:3306)/db?parseTime=maybe"},
		{"mysql", "u:pw@127.0.0.1/db"},
		{"history", "postgres://u:pw@127.0.0.1:5432/db?sslmode=verify-full"},
		{"history", "postgres://u:pw@127.0.0.1:5432/db?sslmode=bogus"},
	}
	for _, c := range cases {
		t.Run(c.kind+" "+c.addr, func(t *testing.T) {
			src := "jobs: []\n"
			switch c.kind {
			case "history":
				src += "history_backend: {type: postgres, url: '" + c.addr + "'}\n"
			case "mysql":
				src += "lock_backend: {type: mysql, dsn: '" + c.addr + "'}\n"
			default:
				src += "lock_backend: {type: " + c.kind + ", url: '" + c.addr + "'}\n"
			}
			loaded, problems := config.Parse("jobs.yaml", []byte(src))
			startErr := start(c.kind, c.addr)
			if (loaded != nil) != (startErr == nil) {
				t.Fatalf("config.Load says %v; the daemon's start says %v: they must agree", problems, startErr)
			}
		})
	}
}

// start builds what the daemon's start builds from a backend's address,
// without connecting, and closes it.
func start(kind, addr string) error {
	if kind == "history" {
		s, err := fleet.Open(addr, "host")
		if err == nil {
			_ = s.Close()
		}
		return err
	}
	cfg := &config.Config{LockBackend: config.LockBackend{Type: kind, URL: addr, TTL: 30 * time.Second}}
	l, err := NewLocker(cfg)
	if c, ok := l.(io.Closer); ok && err == nil {
		_ = c.Close()
	}
	return err
}
