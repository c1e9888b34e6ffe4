package config

import (
	"errors"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"gopkg.in/yaml.v3"

	"cronvisor/internal/mask"
)

// What the daemon's parts refuse when they start is refused here, by the
// same parsers with the same input, when the file is loaded: the lock
// backends' and the shared history's drivers parse their address, the
// metrics server listens, notifications and pings are posted, the Redis
// lease and the SQL name prefix are checked. Load is
// the one check that validate, the daemon, `run`, the console and a
// reload all make, so none of them can pass a file another refuses, and
// each says so in the same words at the value's line and column (the
// value masked: internal/mask).
//
// Each check returns what the value should look like and, when it is not
// that, why (nil: it is). Why is the driver's own reason where it has
// one, scrubbed of the value's secret parts.

func checkRedisURL(s string) (string, error) {
	want := "a redis://HOST:PORT/DB or rediss:// URL"
	p, err := url.Parse(s)
	if err != nil || (p.Scheme != "redis" && p.Scheme != "rediss") || p.Host == "" {
		return want, errShape
	}
	_, err = redis.ParseURL(s) // as lock.NewRedisLocker does
	return want, driverReason(err, s)
}

func checkPostgresURL(s string) (string, error) {
	want := "a postgres://USER:PASS@HOST:PORT/DB URL"
	p, err := url.Parse(s)
	if err != nil || (p.Scheme != "postgres" && p.Scheme != "postgresql") || p.Host == "" || strings.Trim(p.Path, "/") == "" {
		return want, errShape
	}
	_, err = pgx.ParseConfig(s) // as lock.NewPostgresLocker does: sslmode, ports, parameters
	return want, driverReason(err, s)
}

// checkMySQLDSN parses the dsn as the driver (lock.NewMySQLLocker) will.
func checkMySQLDSN(s string) (string, error) {
	want := "a USER:PASS@tcp(HOST:PORT)/DB dsn"
	cfg, err := mysql.ParseDSN(s)
	if err != nil {
		return want, driverReason(err, s)
	}
	if cfg.DBName == "" {
		return want, errShape
	}
	return want, nil
}

// checkPgxURL parses the url as the fleet's driver (fleet.Open) will.
func checkPgxURL(s string) (string, error) {
	want := "a postgres://USER:PASS@HOST:PORT/DB URL"
	if !strings.HasPrefix(s, "postgres://") && !strings.HasPrefix(s, "postgresql://") {
		return want, errShape
	}
	_, err := pgx.ParseConfig(s)
	return want, driverReason(err, s)
}

// checkHTTPURL is a webhook's or a ping's URL as net/http will post to
// it: http or https, a host, and a port it can dial.
func checkHTTPURL(s string) (string, error) {
	want := "an http:// or https:// URL"
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return want, errShape
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return want, errors.New("port " + p + " is not 1-65535")
		}
	}
	return want, nil
}

// CheckListen is the check of a HOST:PORT the metrics server listens on
// (metrics.listen, and the daemon's --metrics-addr): its port as
// net.Listen reads it, a number 0-65535 or a service name. Whether the
// host resolves, and whether the port is free, are the daemon's to find.
func CheckListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return errors.New("port " + port + " is not 0-65535 or a service name")
	}
	return nil
}

// maxRedisTTL is the longest lease lock.NewRedisLocker takes: how long
// Redis keeps the locks' records (lock.DefaultRetention), which a lease
// may not outlive.
const maxRedisTTL = 7 * 24 * time.Hour

// sqlPrefixRE is the lock name prefix the SQL backends take (lock's
// names, then at most a final ':').
var sqlPrefixRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+:?$`)

func isSQL(backend string) bool { return backend == BackendMySQL || backend == BackendPostgres }

// errShape is a value not of the form asked: the "is not" says it all.
var errShape = errors.New("")

// driverReason is a driver's refusal of raw as a message may quote it:
// without the copy of raw it leads with (pgx's "cannot parse `…`: "),
// and scrubbed of raw's secrets.
func driverReason(err error, raw string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "cannot parse `"); ok {
		if i := strings.Index(rest, "`: "); i >= 0 {
			msg = rest[i+3:]
		}
	}
	return errors.New(mask.Text(msg, raw))
}

// refuse reports the value raw of key, which check refused: what it
// should be and why not.
func (d *decoder) refuse(n *yaml.Node, key, raw, want string, why error) {
	reason := ""
	if why != nil && why.Error() != "" {
		reason = ": " + why.Error()
	}
	d.errorf(n, "%s: %q is not %s%s", key, mask.URL(raw), want, reason)
}
