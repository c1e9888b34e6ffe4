// Package mask is the one place that decides what of a URL or DSN the
// program may print: every URL a message, a log record, a status or a
// record shows (webhook and ping targets, lock and history backends)
// goes through URL, and every error that may quote one through Error.
package mask

import (
	"net/url"
	"strings"
)

// Marker stands where a secret part of a URL was.
const Marker = "***"

// URL is raw as the program may print it: its user info (user name and
// password alike: some services put a key there) and every query value
// and the fragment replaced by Marker, query keys kept, and the path's
// secret-bearing segments masked (see maskPath). A URL that does not
// parse is cut by pattern: everything between "://" (or the start, for a
// DSN such as user:pass@tcp(host:3306)/db) and the last "@" is user
// info, then the host, the path, "?" and "#" as usual.
func URL(raw string) string {
	p := split(raw)
	return p.String()
}

// parts are the pieces of a URL as written, escaping kept.
type parts struct {
	scheme, user, host, path, query, fragment string
	hasUser, hasQuery, hasFragment            bool
}

// split cuts raw into its parts, by net/url when it parses with a host,
// else by pattern.
func split(raw string) parts {
	if u, err := url.Parse(raw); err == nil && u.Host != "" && u.Opaque == "" {
		p := parts{scheme: u.Scheme + "://", host: u.Host, path: u.EscapedPath(),
			query: u.RawQuery, hasQuery: u.ForceQuery || u.RawQuery != "",
			fragment: u.EscapedFragment(), hasFragment: u.Fragment != ""}
		if u.User != nil {
			p.hasUser = true
			p.user = rawUser(raw)
		}
		return p
	}
	var p parts
	rest := raw
	if i := strings.Index(raw, "://"); i >= 0 {
		p.scheme, rest = raw[:i+3], raw[i+3:]
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		p.hasUser, p.user, rest = true, rest[:at], rest[at+1:]
	}
	rest, p.fragment, p.hasFragment = strings.Cut(rest, "#")
	rest, p.query, p.hasQuery = strings.Cut(rest, "?")
	p.host, p.path = rest, ""
	if i := strings.Index(rest, "/"); i >= 0 {
		p.host, p.path = rest[:i], rest[i:]
	}
	return p
}

// rawUser is the user info of a URL that parses, as written in raw.
func rawUser(raw string) string {
	_, rest, _ := strings.Cut(raw, "://")
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	user, _, _ := strings.Cut(rest, "@")
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		user = rest[:at]
	}
	return user
}

// String joins the parts with their secrets masked.
func (p parts) String() string {
	var b strings.Builder
	b.WriteString(p.scheme)
	if p.hasUser {
		b.WriteString(Marker + "@")
	}
	b.WriteString(p.host)
	b.WriteString(maskPath(p.path, hostname(p.host)))
	if p.hasQuery {
		b.WriteString("?" + maskQuery(p.query))
	}
	if p.hasFragment && p.fragment != "" {
		b.WriteString("#" + Marker)
	}
	return b.String()
}

// hostname is host without its port, lower case.
func hostname(host string) string {
	if strings.HasPrefix(host, "[") {
		return host
	}
	h, _, _ := strings.Cut(host, ":")
	return strings.ToLower(h)
}

// maskQuery keeps each key of a raw query and masks its value; an item
// without "=" (a bare token) is masked whole.
func maskQuery(q string) string {
	items := strings.Split(q, "&")
	for i, it := range items {
		k, v, ok := strings.Cut(it, "=")
		switch {
		case ok && v != "":
			items[i] = k + "=" + Marker
		case !ok && it != "":
			items[i] = Marker
		}
	}
	return strings.Join(items, "&")
}
