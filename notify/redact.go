package notify

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
)

// masked stands where a secret part of a URL was.
const masked = "***"

// uuidRE is a UUID: healthchecks.io's ping URLs and Teams' webhook paths
// carry them, and whoever knows one can ping or post.
var uuidRE = regexp.MustCompile(`(?i)^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// tokenRE is a path segment that looks like a generated token: long,
// of a token's alphabet, letters and digits both.
var tokenRE = regexp.MustCompile(`^[A-Za-z0-9_-]{24,}$`)

// secretAfter names, per host suffix, the path segment after which every
// segment is a secret: Slack's /services/T…/B…/token, Teams' /webhookb2/…
// and /webhook/…, Discord's /api/webhooks/id/token.
var secretAfter = []struct{ host, segment string }{
	{"hooks.slack.com", "services"},
	{"hooks.slack.com", "workflows"},
	{"hooks.slack.com", "triggers"},
	{"webhook.office.com", "webhookb2"},
	{"outlook.office.com", "webhook"},
	{"discord.com", "webhooks"},
	{"discordapp.com", "webhooks"},
}

// safeURL is raw as a log may show it: without user info, query and
// fragment, with the secret-bearing parts of its path masked (every
// segment of a healthchecks ping URL's path but its last known word, a
// UUID or token anywhere, the segments that follow a webhook service's
// marker). A URL that does not parse is shown as its scheme and host at
// most.
func safeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		scheme, rest, ok := strings.Cut(raw, "://")
		if !ok {
			return masked
		}
		host, _, _ := strings.Cut(rest, "/")
		if _, h, ok := strings.Cut(host, "@"); ok {
			host = h
		}
		host, _, _ = strings.Cut(host, "?")
		return scheme + "://" + host + "/" + masked
	}
	segs := strings.Split(u.EscapedPath(), "/")
	host := strings.ToLower(u.Hostname())
	after := len(segs) // mask every segment from here on
	for _, sa := range secretAfter {
		if host != sa.host && !strings.HasSuffix(host, "."+sa.host) {
			continue
		}
		for i, s := range segs {
			if s == sa.segment && i+1 < after {
				after = i + 1
			}
		}
	}
	hc := host == "hc-ping.com" || strings.HasSuffix(host, ".hc-ping.com")
	for i, s := range segs {
		switch {
		case s == "":
		case i >= after, uuidRE.MatchString(s), tokenRE.MatchString(s) && strings.ContainsAny(s, "0123456789"):
			segs[i] = masked
		case hc && i == 1: // hc-ping.com/PING_KEY/slug: the key
			segs[i] = masked
		}
	}
	return u.Scheme + "://" + u.Host + strings.Join(segs, "/")
}

// secrets are the parts of raw that safeURL leaves out, for scrubbing a
// message that quotes them in a form not known here.
func secrets(raw string) []string {
	var out []string
	if _, q, ok := strings.Cut(raw, "?"); ok && q != "" {
		out = append(out, q)
		if v, err := url.ParseQuery(q); err == nil {
			for _, vs := range v {
				out = append(out, vs...)
			}
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return append(out, raw)
	}
	if u.User != nil {
		out = append(out, u.User.String())
	}
	kept := strings.Split(strings.TrimPrefix(safeURL(raw), u.Scheme+"://"+u.Host), "/")
	for i, s := range strings.Split(u.EscapedPath(), "/") {
		if i < len(kept) && kept[i] == masked && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// safeError is err as a log may show it for a delivery to raw. An
// *url.Error (which net/http's errors are, quoting the whole URL) is
// rebuilt from its parts with safeURL; whatever text remains is scrubbed
// of raw's secret parts, in case a wrapped error quotes them another way.
// It unwraps to err.
func safeError(err error, raw string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		msg = ue.Op + " " + safeURL(ue.URL) + ": " + ue.Err.Error()
	}
	for _, s := range secrets(raw) {
		if len(s) >= 4 {
			msg = strings.ReplaceAll(msg, s, masked)
		}
	}
	return &redactedError{msg: msg, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
