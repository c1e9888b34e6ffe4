package sql

import (
	"errors"
	"net/url"
	"regexp"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"cronvisor/internal/base/mask"
	"cronvisor/internal/lock"
)

// MySQL and Postgres are the SQL backends: session locks and the slots'
// ledger on the server (sql*.go), which differ in their dialect only.
var (
	MySQL = lock.Backend{
		Name: "mysql", Address: "dsn", Hint: " (user:pass@tcp(host:3306)/db)",
		Check: checkMySQLDSN, Prefix: checkSQLPrefix,
		Open: func(s lock.Settings) (lock.Locker, error) { return NewMySQLLocker(s.URL, sqlOptions(s)...) },
	}
	Postgres = lock.Backend{
		Name: "postgres", Address: "url",
		Check: checkPostgresURL, Prefix: checkSQLPrefix,
		Open: func(s lock.Settings) (lock.Locker, error) { return NewPostgresLocker(s.URL, sqlOptions(s)...) },
	}
)

func sqlOptions(s lock.Settings) []SQLOption {
	if s.Prefix == "" {
		return nil
	}
	return []SQLOption{WithSQLPrefix(s.Prefix)}
}

func checkPostgresURL(s string) (string, error) {
	want := "a postgres://USER:PASS@HOST:PORT/DB URL"
	p, err := url.Parse(s)
	if err != nil || (p.Scheme != "postgres" && p.Scheme != "postgresql") || p.Host == "" || strings.Trim(p.Path, "/") == "" {
		return want, errShape
	}
	_, err = pgx.ParseConfig(s) // as NewPostgresLocker does: sslmode, ports, parameters
	return want, mask.Reason(err, s)
}

// checkMySQLDSN parses the dsn as the driver (NewMySQLLocker) will.
func checkMySQLDSN(s string) (string, error) {
	want := "a USER:PASS@tcp(HOST:PORT)/DB dsn"
	cfg, err := mysql.ParseDSN(s)
	if err != nil {
		return want, mask.Reason(err, s)
	}
	if cfg.DBName == "" {
		return want, errShape
	}
	return want, nil
}

// errShape is an address not of the form asked: the "is not …" of its
// message says it all.
var errShape = errors.New("")

// sqlPrefixRE is the lock name prefix the SQL backends take (lock's
// names, then at most a final ':').
var sqlPrefixRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+:?$`)

func checkSQLPrefix(p string) error {
	if p != "" && !sqlPrefixRE.MatchString(p) {
		return errors.New("letters, digits, '_', '.' and '-', and ':' only at the end")
	}
	return nil
}
