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
	cases := []struct {
		name, table string
		start       func() (*server, error)
	}{
		{"mariadb", "mysql.kept", func() (*server, error) { m, err := StartMariaDB(); return srv(m, err) }},
		{"postgres", "kept", func() (*server, error) { p, err := StartPostgres(); return srv(p, err) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.start()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
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
			s.Close()
			if alive(pid) {
				t.Errorf("server pid %d still running after Close", pid)
			}
			if _, err := os.Stat(s.Dir()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Close left %s: %v", s.Dir(), err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if s.admin.PingContext(ctx) == nil {
				t.Error("the server still answers after Close")
			}
		})
	}
}

func srv[T interface{ *MariaDB | *Postgres }](s T, err error) (*server, error) {
	if err != nil {
		return nil, err
	}
	switch v := any(s).(type) {
	case *MariaDB:
		return &v.server, nil
	case *Postgres:
		return &v.server, nil
	}
	return nil, errors.New("unreachable")
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }
