package config

import (
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// lockBackend decodes lock_backend. The URL is checked after expanding
// ${VAR}, so a password can live in the environment rather than the file;
// messages therefore quote the URL as written, never expanded. It returns
// the names of the variables expanded: secrets of the supervisor's.
func (d *decoder) lockBackend(lb *LockBackend, e entry) (secrets []string) {
	lb.Line, lb.Col = e.key.Line, e.key.Column
	known := backendKeys
	f := make([]entry, len(known))
	d.keyed(e.val, "lock_backend", known, nil, f)
	if t, ok := lookup(known, f, "type"); ok {
		if s, ok := d.text("lock_backend.type", t.val); ok {
			lb.Type = s
			switch {
			case s == "mysql" || s == "postgres":
				d.errorf(t.val, "lock_backend.type: %q is part of cronvisor's contract but not built in this version (file and redis are)", s)
			case s != BackendFile && s != BackendRedis:
				d.errorf(t.val, "lock_backend.type: %q is not one of file, redis", s)
			}
		}
	}
	if t, ok := lookup(known, f, "ttl"); ok {
		if v, ok := d.duration("lock_backend.ttl", t.val); ok {
			lb.TTL = v
			if v < time.Second {
				d.errorf(t.val, "lock_backend.ttl: %v is shorter than 1s; the lease could lapse between renewals", v)
			}
		}
	}
	u, hasURL := lookup(known, f, "url")
	switch {
	case hasURL && lb.Type == BackendFile:
		d.warnf(u.key, "lock_backend.url is not used by the file backend")
	case hasURL:
		lb.URL, secrets = d.redisURL(u.val)
	case lb.Type == BackendRedis:
		d.errorf(e.key, "lock_backend: the redis backend needs a url")
	}
	return secrets
}

// redisURL expands and checks a Redis URL, and returns the names of the
// variables it expanded.
func (d *decoder) redisURL(n *yaml.Node) (string, []string) {
	raw, ok := d.text("lock_backend.url", n)
	if !ok {
		return "", nil
	}
	var used, unset []string
	expanded := os.Expand(raw, func(name string) string {
		v, ok := os.LookupEnv(name)
		if !ok {
			unset = append(unset, name)
		} else if !slices.Contains(used, name) {
			used = append(used, name)
		}
		return v
	})
	if len(unset) > 0 {
		d.errorf(n, "lock_backend.url: environment variable %s is not set", strings.Join(unset, ", "))
		return "", nil
	}
	p, err := url.Parse(expanded)
	if err != nil || (p.Scheme != "redis" && p.Scheme != "rediss") || p.Host == "" {
		d.errorf(n, "lock_backend.url: %q is not a redis://HOST:PORT/DB or rediss:// URL", raw)
		return "", nil
	}
	return expanded, used
}

// history decodes the retention policy for run records and their output.
func (d *decoder) history(h *HistoryPolicy, n *yaml.Node) {
	known := historyKeys
	f := make([]entry, len(known))
	d.keyed(n, "history", known, nil, f)
	if e, ok := lookup(known, f, "keep_runs"); ok {
		if v, ok := d.positiveInt("history.keep_runs", e.val); ok {
			h.KeepRuns = v
		}
	}
	if e, ok := lookup(known, f, "keep_age"); ok {
		if v, ok := d.duration("history.keep_age", e.val); ok {
			if v == 0 {
				d.errorf(e.val, "history.keep_age: must be greater than 0")
			}
			h.KeepAge = v
		}
	}
	if e, ok := lookup(known, f, "log_limit"); ok {
		if v, ok := d.size("history.log_limit", e.val); ok {
			h.LogLimit = v
		}
	}
}
