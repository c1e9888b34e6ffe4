package config

import (
	"strings"
	"testing"
)

// TestStartChecks: what the daemon's parts would refuse at their start
// (a driver's parse of a backend's address, net.Listen's of the metrics
// address, net/http's dial of a webhook's port) is an error of the file
// at the value, with the driver's reason and no secret.
func TestStartChecks(t *testing.T) {
	job := func(extra ...string) string {
		return y(append([]string{"jobs:", "  - name: a", "    schedule: '@hourly'", "    command: x", "    timeout: 1m"}, extra...)...)
	}
	cases := []struct {
		name, src, at, msg string
	}{
		{"postgres lock sslmode", y("lock_backend:", "  type: postgres", "  url: 'postgres://u:pw@127.0.0.1:5432/db?sslmode=bogus'", "jobs: []"), "3:8",
			`lock_backend.url: "postgres://***@127.0.0.1:5432/db?sslmode=***" is not a postgres://USER:PASS@HOST:PORT/DB URL: failed to configure TLS (sslmode is invalid)`},
		{"postgres lock port", y("lock_backend:", "  type: postgres", "  url: 'postgres://u:secret@h:99999/db'", "jobs: []"), "3:8", `is not a postgres://USER:PASS@HOST:PORT/DB URL: `},
		{"history sslmode", y("history_backend:", "  type: postgres", "  url: 'postgres://u:secret@h/db?sslmode=bogus'", "jobs: []"), "3:8",
			`history_backend.url: "postgres://***@h/db?sslmode=***" is not a postgres://USER:PASS@HOST:PORT/DB URL: failed to configure TLS (sslmode is invalid)`},
		{"redis database", y("lock_backend:", "  type: redis", "  url: 'redis://:secret@h:6379/abc'", "jobs: []"), "3:8", `is not a redis://HOST:PORT/DB or rediss:// URL: redis: invalid database number`},
		{"redis option", y("lock_backend:", "  type: redis", "  url: 'redis://h:6379/0?nosuch_option=1'", "jobs: []"), "3:8", `redis: unexpected option: nosuch_option`},
		{"mysql parameter", y("lock_backend:", "  type: mysql", "  dsn: 'u:secret@tcp(h:3306)/db?parseTime=maybe'", "jobs: []"), "3:8", `is not a USER:PASS@tcp(HOST:PORT)/DB dsn: `},
		{"webhook port", job("    notify: [{on: [failure], url: 'http://u:secret@127.0.0.1:99999/hook'}]"), "6:35",
			`notify.url: "http://***@127.0.0.1:99999/hook" is not an http:// or https:// URL: port 99999 is not 1-65535`},
		{"ping port", job("    ping: 'https://hc.example:0/x'"), "6:11", `ping: "https://hc.example:0/x" is not an http:// or https:// URL: port 0 is not 1-65535`},
		{"redis ttl", y("lock_backend:", "  type: redis", "  url: 'redis://h:6379/0'", "  ttl: 8d", "jobs: []"), "4:8", `lock_backend.ttl: 192h0m0s is longer than 7d`},
		{"sql prefix", y("lock_backend:", "  type: postgres", "  url: 'postgres://u@h/db'", "  prefix: 'a:b'", "jobs: []"), "4:11", `lock_backend.prefix: "a:b": the postgres backend takes letters, digits, '_', '.' and '-', and ':' only at the end`},
		{"metrics port", y("metrics: {listen: '127.0.0.1:99999'}", "jobs: []"), "1:19", `metrics.listen: "127.0.0.1:99999" is not HOST:PORT (port 99999 is not 0-65535 or a service name)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, ps := Parse("jobs.yaml", []byte(c.src))
			ps = errorsOf(ps)
			if cfg != nil || len(ps) != 1 {
				t.Fatalf("got config %v and problems %v, want one error", cfg != nil, ps)
			}
			if at(ps[0]) != c.at || !strings.Contains(ps[0].Message, c.msg) {
				t.Fatalf("problem %s: %s\nwant at %s: %s", at(ps[0]), ps[0].Message, c.at, c.msg)
			}
			for _, secret := range []string{"secret", ":pw@", "bogus"} {
				if strings.Contains(ps[0].Message, secret) {
					t.Errorf("the message quotes %q: %s", secret, ps[0].Message)
				}
			}
		})
	}
}

// TestStartChecksPass: the addresses the drivers take pass.
func TestStartChecksPass(t *testing.T) {
	for _, src := range []string{
		y("lock_backend:", "  type: postgres", "  url: 'postgres://u:pw@127.0.0.1:5432/db?sslmode=disable&connect_timeout=2'", "jobs: []"),
		y("lock_backend:", "  type: redis", "  url: 'rediss://:pw@h:6380/3?dial_timeout=2s'", "jobs: []"),
		y("lock_backend:", "  type: mysql", "  dsn: 'u:pw@tcp(h:3306)/db?parseTime=true'", "jobs: []"),
		y("history_backend:", "  type: postgres", "  url: 'postgresql://u@h:5432/db?sslmode=verify-full'", "jobs: []"),
		y("metrics: {listen: '127.0.0.1:http'}", "jobs: []"),
		y("lock_backend: {type: redis, url: 'redis://h/0', ttl: 7d, prefix: 'a:b:'}", "jobs: []"),
		y("lock_backend: {type: mysql, dsn: 'u@tcp(h:3306)/db', prefix: 'app.cron:'}", "jobs: []"),
		y("jobs:", "  - {name: a, schedule: '@hourly', command: x, timeout: 1m, ping: 'http://h:65535/p'}"),
	} {
		if cfg, ps := Parse("jobs.yaml", []byte(src)); cfg == nil || len(errorsOf(ps)) > 0 {
			t.Errorf("%s: problems %v, want none", src, ps)
		}
	}
}

func TestCheckListen(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:9750": true, ":0": true, "[::1]:65535": true,
		"localhost": false, "127.0.0.1:65536": false, "127.0.0.1:-1": false} {
		if err := CheckListen(addr); (err == nil) != ok {
			t.Errorf("CheckListen(%q) = %v, want ok %v", addr, err, ok)
		}
	}
}

// errorsOf is ps without its warnings.
func errorsOf(ps []Problem) []Problem {
	var out []Problem
	for _, p := range ps {
		if !p.Warning {
			out = append(out, p)
		}
	}
	return out
}
