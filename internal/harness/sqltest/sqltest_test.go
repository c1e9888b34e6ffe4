package sqltest

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// Each server starts, answers, survives a Stop/Start on the same port and
// data (a table created before is still there), and Close leaves neither
// a process nor its directory behind.
func TestServers(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts, restarts and stops MariaDB and PostgreSQL; runs in the full suite")
	}
	cases := []struct {
		name, table string
		start       func() (*server, func(), error)
	}{
		{"mariadb", "mysql.kept", func() (*server, func(), error) {
			m, err := StartMariaDB()
			if err != nil {
				return nil, nil, err
			}
			return &m.server, m.Close, nil
		}},
		{"postgres", "kept", func() (*server, func(), error) {
			p, err := StartPostgres()
			if err != nil {
				return nil, nil, err
			}
			return &p.server, p.Close, nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, closeServer, err := tc.start()
			if err != nil {
				t.Fatal(err)
			}
			defer closeServer()
			if err := s.Exec("CREATE TABLE " + tc.table + " (n INT)"); err != nil {
				t.Fatalf("create a table: %v", err)
			}
			pid := s.cmd.Process.Pid
			s.Stop()
			if s.Running() || alive(pid) {
				t.Fatalf("server pid %d still running after Stop", pid)
			}
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			if err := s.Exec("INSERT INTO " + tc.table + " VALUES (1)"); err != nil {
				t.Errorf("the table did not survive the restart: %v", err)
			}
			pid = s.cmd.Process.Pid
			closeServer()
			if alive(pid) {
				t.Errorf("server pid %d still running after Close", pid)
			}
			if _, err := os.Stat(s.Dir()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Close left %s: %v", s.Dir(), err)
			}
			db, err := s.dial(s.port)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if db.PingContext(ctx) == nil {
				t.Error("the server still answers after Close")
			}
		})
	}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }
