package config

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// lockBackend decodes lock_backend. The url (redis, postgres) or dsn
// (mysql) is checked after expanding ${VAR}, so a password can live in the
// environment rather than the file; messages therefore quote it as
// written, never expanded. It returns the names of the variables
// expanded: secrets of the supervisor's.
func (d *decoder) lockBackend(lb *LockBackend, e entry) (secrets []string) {
	lb.Line, lb.Col = e.key.Line, e.key.Column
	known := backendKeys
	f := make([]entry, len(known))
	d.keyed(e.val, "lock_backend", known, nil, f)
	d.backendScalars(lb, known, f)
	return d.backendAddress(lb, e, known, f)
}

// backendScalars decodes lock_backend's type, ttl and prefix; the
// backend named by type checks its ttl and prefix (lockkind.go).
func (d *decoder) backendScalars(lb *LockBackend, known []string, f []entry) {
	if t, ok := lookup(known, f, "type"); ok {
		if s, ok := d.text("lock_backend.type", t.val); ok {
			lb.Type = s
			if _, ok := lockKind(s); !ok {
				d.errorf(t.val, "lock_backend.type: %q is not one of %s", s, lockKindNames())
			}
		}
	}
	kind, _ := lockKind(lb.Type) // nil: the type is refused already
	if t, ok := lookup(known, f, "ttl"); ok {
		if v, ok := d.duration("lock_backend.ttl", t.val); ok {
			lb.TTL = v
			d.backendTTL(kind, lb, t, v)
		}
	}
	if p, ok := lookup(known, f, "prefix"); ok {
		if s, ok := d.text("lock_backend.prefix", p.val); ok {
			lb.Prefix = s
			d.backendPrefix(kind, lb, p, s)
		}
	}
}

// backendTTL checks lock_backend.ttl by the backend's rule.
func (d *decoder) backendTTL(kind LockKind, lb *LockBackend, t entry, v time.Duration) {
	if kind == nil {
		return
	}
	if used, err := kind.CheckTTL(v); !used {
		d.warnf(t.key, "lock_backend.ttl is not used by the %s backend", lb.Type)
	} else if err != nil {
		d.errorf(t.val, "lock_backend.ttl: %v is %v", v, err)
	}
}

// backendPrefix checks lock_backend.prefix: the form every backend's
// names take, then the backend's own rule.
func (d *decoder) backendPrefix(kind LockKind, lb *LockBackend, p entry, s string) {
	if !prefixRE.MatchString(s) {
		d.errorf(p.val, "lock_backend.prefix: %q: use letters, digits, '_', '.', '-' and ':', up to 50 characters", s)
		return
	}
	if kind == nil {
		return
	}
	if used, err := kind.CheckPrefix(s); !used {
		d.warnf(p.key, "lock_backend.prefix is not used by the %s backend", lb.Type)
	} else if err != nil {
		d.errorf(p.val, "lock_backend.prefix: %q: the %s backend takes %v", s, lb.Type, err)
	}
}

// backendAddress decodes lock_backend's url or dsn, as its type wants,
// and returns the variables it expanded.
func (d *decoder) backendAddress(lb *LockBackend, e entry, known []string, f []entry) (secrets []string) {
	kind, ok := lockKind(lb.Type)
	if !ok {
		return nil
	}
	key, hint := kind.AddressKey()
	if key == "" {
		for _, name := range []string{"url", "dsn"} {
			if k, ok := lookup(known, f, name); ok {
				d.warnf(k.key, "lock_backend.%s is not used by the %s backend", name, lb.Type)
			}
		}
		return nil
	}
	other := "url"
	if key == "url" {
		other = "dsn"
	}
	if o, ok := lookup(known, f, other); ok {
		d.errorf(o.key, "lock_backend.%s: the %s backend takes a %s%s, not a %s", other, lb.Type, key, hint, other)
	}
	a, ok := lookup(known, f, key)
	if !ok {
		d.errorf(e.key, "lock_backend: the %s backend needs a %s", lb.Type, key)
		return nil
	}
	lb.URL, secrets = d.backendAddr("lock_backend."+key, a.val, kind.CheckAddress)
	return secrets
}

// prefixRE is what a lock name prefix may hold: it starts server-side
// names and keys, and MySQL's names are short.
var prefixRE = regexp.MustCompile(`^[A-Za-z0-9_.:-]{0,50}$`)

// backendAddr expands and checks a backend's url or dsn, and returns the
// names of the variables it expanded. check returns what the value should
// look like and why it does not (see startcheck.go).
func (d *decoder) backendAddr(key string, n *yaml.Node, check func(string) (string, error)) (string, []string) {
	raw, ok := d.text(key, n)
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
	if len(unset) > 0 && d.reading {
		// A command that only looks needs no backend it cannot reach:
		// it says so, and shows what the state dir and the daemon say.
		d.unsetEnv = append(d.unsetEnv, unset...)
		return "", nil
	}
	if len(unset) > 0 {
		d.errorf(n, "%s: environment variable %s is not set", key, strings.Join(unset, ", "))
		return "", nil
	}
	if want, why := check(expanded); why != nil {
		d.refuse(n, key, raw, want, why)
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
