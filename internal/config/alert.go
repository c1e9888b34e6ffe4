package config

import (
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Defaults of the retry keys.
const (
	DefaultRetryBackoff    = 10 * time.Second
	DefaultRetryBackoffMax = 5 * time.Minute
	// MaxRetries bounds retries: attempts past a few dozen in one slot are a
	// typo, not a policy.
	MaxRetries = 100
)

// RetryOn is the set of outcomes a job retries after.
type RetryOn struct{ Failed, Timeout bool }

// DefaultRetryOn retries both failures and timeouts, as the contract shows.
// A constant in all but name (a struct cannot be one): nothing writes it.
var DefaultRetryOn = RetryOn{Failed: true, Timeout: true}

// Metrics is the top-level metrics block; Listen "" means off.
type Metrics struct{ Listen string }

// Events is a set of notification events, one bit each.
type Events uint16

// Notification events, as written in a target's on: list.
const (
	EventFailure Events = 1 << iota
	EventTimeout
	EventSkip
	EventMissed
	EventRecovered
	EventSuccess
	EventStart
	EventSlow
	// EventHostLost: a run of another host that this peer closed because
	// that host was lost (history_backend postgres; see package fleet).
	EventHostLost
	// EventFast: a run ended ok in less than its job's warn_fast.
	EventFast
)

// eventNames are the names of the Events bits in order.
var eventNames = []string{"failure", "timeout", "skip", "missed", "recovered", "success", "start", "slow", "host_lost", "fast"}

// EventName is the name of one event bit as written in jobs.yaml.
func EventName(e Events) string {
	for i, n := range eventNames {
		if e == 1<<i {
			return n
		}
	}
	return ""
}

// Has reports whether the set holds e.
func (s Events) Has(e Events) bool { return s&e != 0 }

// Target is one notification target: a webhook (URL) or a command.
type Target struct {
	On         Events
	URL        string            // webhook: POST the JSON body here
	Headers    map[string]string // webhook headers, ${ENV} expanded at load (as written by LoadForReading)
	Command    []string          // command: argv, a string runs with /bin/sh -c
	AfterSkips int               // skip only after this many consecutive skips; default 1
}

// retries decodes a job's extra attempts: 0, or up to MaxRetries.
func (d *decoder) retries(j *Job, n *yaml.Node, key string) {
	if rn := resolve(n); rn.Kind == yaml.ScalarNode && rn.Value == "0" {
		j.Retries = 0
		return
	}
	if v, ok := d.positiveInt(key, n); ok {
		if v > MaxRetries {
			d.errorf(n, "retries: %d is more than %d", v, MaxRetries)
			return
		}
		j.Retries = v
	}
}

// ping decodes the monitor URL, kept without a trailing slash so that
// /start and /fail can be appended.
func (d *decoder) ping(j *Job, n *yaml.Node, key string) {
	if s, ok := d.text(key, n); ok && d.httpURL(key, n, s) {
		j.Ping = strings.TrimRight(s, "/")
	}
}

func (d *decoder) retryOn(n *yaml.Node) RetryOn {
	var r RetryOn
	for _, item := range d.stringList("retry_on", n) {
		switch v := resolve(item).Value; v {
		case "failed":
			r.Failed = true
		case "timeout":
			r.Timeout = true
		default:
			d.errorf(item, "retry_on: %q is not one of failed, timeout", v)
		}
	}
	return r
}

// stringList returns the scalar items of a list, reporting the others.
func (d *decoder) stringList(key string, n *yaml.Node) []*yaml.Node {
	rn := resolve(n)
	if rn.Kind != yaml.SequenceNode {
		d.errorf(n, "%s: expected a list, found %s", key, describe(n))
		return nil
	}
	out := make([]*yaml.Node, 0, len(rn.Content))
	for _, item := range rn.Content {
		if ri := resolve(item); ri.Kind != yaml.ScalarNode || isNull(ri) {
			d.errorf(item, "%s: each item must be a string, found %s", key, describe(item))
			continue
		}
		out = append(out, item)
	}
	return out
}

// httpURL checks a webhook's or ping's URL (checkHTTPURL).
func (d *decoder) httpURL(key string, n *yaml.Node, s string) bool {
	if want, why := checkHTTPURL(s); why != nil {
		d.refuse(n, key, s, want, why)
		return false
	}
	return true
}

// targets decodes a notify list.
// targets decodes a notify list once per node: the defaults' list is
// every job's that has none of its own, and its jobs share the one decoded
// (read-only) slice, as its problems were reported when defaults were.
func (d *decoder) targets(n *yaml.Node) []Target {
	if ts, ok := d.targetLists[n]; ok {
		return ts
	}
	ts := d.decodeTargets(n)
	d.targetLists[n] = ts
	return ts
}

func (d *decoder) decodeTargets(n *yaml.Node) []Target {
	rn := resolve(n)
	if rn.Kind != yaml.SequenceNode {
		d.errorf(n, "notify: expected a list of targets (- on: [failure] ...), found %s", describe(n))
		return nil
	}
	out := make([]Target, 0, len(rn.Content))
	for _, item := range rn.Content {
		if t, ok := d.target(item); ok {
			out = append(out, t)
		}
	}
	return out
}

func (d *decoder) target(n *yaml.Node) (Target, bool) {
	f := make([]entry, len(targetKeys))
	d.keyed(n, "notify target", targetKeys, nil, f)
	t := Target{AfterSkips: 1}
	ok := true
	if e, has := lookup(targetKeys, f, "on"); has {
		for _, item := range d.stringList("notify.on", e.val) {
			v := resolve(item).Value
			if i := slices.Index(eventNames, v); i >= 0 {
				t.On |= 1 << i
			} else {
				d.errorf(item, "notify.on: %q is not one of %s", v, strings.Join(eventNames, ", "))
				ok = false
			}
		}
	} else {
		d.errorf(n, "notify target has no on: list of events")
		ok = false
	}
	u, hasURL := lookup(targetKeys, f, "url")
	c, hasCmd := lookup(targetKeys, f, "command")
	switch {
	case hasURL == hasCmd:
		d.errorf(n, "notify target needs exactly one of url or command")
		ok = false
	case hasURL:
		if s, good := d.text("notify.url", u.val); good && d.httpURL("notify.url", u.val, s) {
			t.URL = s
		} else {
			ok = false
		}
	default:
		var j Job
		j.Shell = DefaultShell
		d.command(&j, c.val)
		t.Command = j.Command
		ok = ok && t.Command != nil
	}
	if e, has := lookup(targetKeys, f, "headers"); has {
		if hasCmd {
			d.warnf(e.key, "notify.headers is not used by a command target")
		}
		t.Headers = d.headers(e.val)
	}
	if e, has := lookup(targetKeys, f, "after_skips"); has {
		if v, good := d.positiveInt("notify.after_skips", e.val); good {
			t.AfterSkips = v
		}
	}
	return t, ok
}

// headers decodes a mapping of header names to values, expanding ${ENV}.
func (d *decoder) headers(n *yaml.Node) map[string]string {
	rn := resolve(n)
	if rn.Kind != yaml.MappingNode {
		d.errorf(n, "notify.headers: expected a mapping, found %s", describe(n))
		return nil
	}
	out := map[string]string{}
	for _, e := range d.entries(rn, 0) {
		v, ok := d.text("notify.headers."+e.name, e.val)
		if !ok {
			continue
		}
		if d.reading {
			out[e.name] = v // nothing is sent: the secret stays unread
			continue
		}
		var unset []string
		out[e.name] = os.Expand(v, func(name string) string {
			val, ok := os.LookupEnv(name)
			if !ok {
				unset = append(unset, name)
			}
			return val
		})
		if len(unset) > 0 {
			d.errorf(e.val, "notify.headers.%s: environment variable %s is not set", e.name, strings.Join(unset, ", "))
		}
	}
	return out
}

// metrics decodes the top-level metrics block.
func (d *decoder) metrics(m *Metrics, n *yaml.Node) {
	f := make([]entry, len(metricsKeys))
	d.keyed(n, "metrics", metricsKeys, nil, f)
	e, ok := lookup(metricsKeys, f, "listen")
	if !ok {
		d.errorf(n, "metrics: needs listen: HOST:PORT")
		return
	}
	s, ok := d.text("metrics.listen", e.val)
	if !ok {
		return
	}
	if err := CheckListen(s); err != nil {
		d.errorf(e.val, "metrics.listen: %q is not HOST:PORT (%v)", s, err)
		return
	}
	host, port, _ := net.SplitHostPort(s)
	if host == "" { // Go listens on every interface; /metrics has no authentication
		d.warnf(e.val, "metrics.listen: %q has no host, so it listens on every interface, unauthenticated; "+
			"write 127.0.0.1:%s to serve this host only, or 0.0.0.0:%s to serve every interface deliberately", s, port, port)
	}
	m.Listen = s
}
