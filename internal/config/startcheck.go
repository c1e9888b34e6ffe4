package config

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"gopkg.in/yaml.v3"

	"cronvisor/internal/base/mask"
)

// What the daemon's parts refuse when they start is refused here, by the
// same parsers with the same input, when the file is loaded: the lock
// backends' and the shared history's drivers parse their address, the
// metrics server listens, notifications and pings are posted, the lock
// backends' leases and name prefixes are checked (each backend's checks
// are its own: lockkind.go). Load is
// the one check that validate, the daemon, `run`, the console and a
// reload all make, so none of them can pass a file another refuses, and
// each says so in the same words at the value's line and column (the
// value masked: internal/base/mask).
//
// Each check returns what the value should look like and, when it is not
// that, why (nil: it is). Why is the driver's own reason where it has
// one, scrubbed of the value's secret parts.

// checkPgxURL parses the url as the fleet's driver (fleet.Open) will.
func checkPgxURL(s string) (string, error) {
	want := "a postgres://USER:PASS@HOST:PORT/DB URL"
	if !strings.HasPrefix(s, "postgres://") && !strings.HasPrefix(s, "postgresql://") {
		return want, errShape
	}
	_, err := pgx.ParseConfig(s)
	return want, mask.Reason(err, s)
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

// errShape is a value not of the form asked: the "is not" says it all.
var errShape = errors.New("")

// refuse reports the value raw of key, which check refused: what it
// should be and why not.
func (d *decoder) refuse(n *yaml.Node, key, raw, want string, why error) {
	reason := ""
	if why != nil && why.Error() != "" {
		reason = ": " + why.Error()
	}
	d.errorf(n, "%s: %q is not %s%s", key, mask.URL(raw), want, reason)
}
