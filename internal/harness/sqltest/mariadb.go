package sqltest

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/go-sql-driver/mysql"
)

// MariaDB is a throwaway mariadbd. It runs with --skip-grant-tables: any
// user name and password are let in, with every privilege.
type MariaDB struct{ server }

// StartMariaDB installs a fresh data directory and starts mariadbd on a
// free loopback port (or where Listen says). A missing mariadb-server is an error: the tests
// need a real server (test.sh installs it).
func StartMariaDB(opts ...Option) (*MariaDB, error) {
	o, err := applyOptions(opts)
	if err != nil {
		return nil, err
	}
	install, err := exec.LookPath("mariadb-install-db")
	if err != nil {
		return nil, fmt.Errorf("sqltest: %v (install mariadb-server)", err)
	}
	daemon, err := lookSbin("mariadbd")
	if err != nil {
		return nil, fmt.Errorf("sqltest: %v (install mariadb-server)", err)
	}
	dir, err := tempDir(nil)
	if err != nil {
		return nil, err
	}
	data, tmp := filepath.Join(dir, "data"), filepath.Join(dir, "tmp")
	user := []string{}
	if os.Geteuid() == 0 {
		user = []string{"--user=root"} // it refuses root otherwise; nothing here is shared
	}
	if err := installMariaDB(install, data, tmp, user); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	m := &MariaDB{server{name: "mariadbd", dir: dir, host: o.host}}
	// Commits reach the OS at once and the disk once a second, as
	// PostgreSQL's fsync=off: a SIGKILL of the server keeps every commit,
	// and a loaded machine's disk does not hold up each one.
	m.argv = func(port int) []string {
		return append([]string{daemon, "--no-defaults", "--datadir=" + data,
			"--innodb-flush-log-at-trx-commit=2",
			"--socket=" + filepath.Join(dir, "mysqld.sock"), "--port=" + strconv.Itoa(port),
			"--bind-address=" + o.host, "--skip-grant-tables", "--skip-log-bin",
			"--pid-file=" + filepath.Join(dir, "mysqld.pid"), "--innodb-buffer-pool-size=16M",
			"--innodb-log-file-size=8M", "--skip-name-resolve", "--tmpdir=" + tmp}, user...)
	}
	m.dial = func(port int) (*sql.DB, error) { return sql.Open("mysql", m.DSN("")) }
	if err := m.startFresh(); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// installMariaDB makes the data directory data, its temporary tables in
// tmp (not /tmp, where servers installed at once could meet), tried
// again on a fresh directory when the bootstrap fails, as it seldom does
// on a loaded machine.
func installMariaDB(install, data, tmp string, user []string) error {
	var err error
	for range 3 {
		for _, d := range []string{data, tmp} {
			if err = os.RemoveAll(d); err == nil {
				err = os.MkdirAll(d, 0o700)
			}
			if err != nil {
				return err
			}
		}
		args := append([]string{install, "--no-defaults", "--datadir=" + data, "--tmpdir=" + tmp, "--skip-test-db",
			"--auth-root-authentication-method=normal"}, user...)
		if err = run(nil, args...); err == nil {
			return nil
		}
	}
	return err
}

// DSN is the driver's DSN for database db ("" for none), as root.
func (m *MariaDB) DSN(db string) string {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", "tcp", m.addr(), db
	return cfg.FormatDSN()
}

// CreateDB creates database name.
func (m *MariaDB) CreateDB(name string) error {
	return m.Exec("CREATE DATABASE `" + name + "`")
}

// lookSbin finds a daemon that may not be on a user's PATH.
func lookSbin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/sbin", "/usr/local/sbin", "/sbin"} {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found", name)
}
