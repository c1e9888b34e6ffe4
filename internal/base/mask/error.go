package mask

import (
	"errors"
	"net/url"
	"slices"
	"strings"
)

// Error is err as the program may print it when it concerns raw: an
// *url.Error (which net/http's and url.Parse's errors are, quoting the
// whole URL) is rebuilt around URL of its URL, and whatever text remains
// is scrubbed of raw's secret parts, in case a library quotes them in
// another form. It unwraps to err; nil stays nil.
func Error(err error, raw string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		msg = ue.Op + " " + URL(ue.URL) + ": " + Text(ue.Err.Error(), raw)
	}
	return &maskedError{msg: Text(msg, raw), err: err}
}

// Text is msg with raw, where it quotes it, shown as URL shows it, and
// every other secret part of raw that it quotes (its user info, password, query and query values, fragment, the
// masked segments of its path) replaced by Marker. Parts shorter than
// 4 bytes are left, as replacing them would garble the message; the
// user info they belong to is replaced whole.
func Text(msg, raw string) string {
	if raw != "" {
		msg = strings.ReplaceAll(msg, raw, URL(raw))
	}
	for _, s := range secrets(raw) {
		if len(s) >= 4 {
			msg = strings.ReplaceAll(msg, s, Marker)
		}
	}
	return msg
}

// secrets are the parts of raw that URL masks, longest first so that a
// whole is replaced before its pieces.
func secrets(raw string) []string {
	p := split(raw)
	var out []string
	if p.hasUser {
		out = append(out, p.user)
		if _, pw, ok := strings.Cut(p.user, ":"); ok {
			out = append(out, pw)
			if u, err := url.PathUnescape(pw); err == nil {
				out = append(out, u)
			}
		}
	}
	if p.hasQuery {
		out = append(out, p.query)
		for _, it := range strings.Split(p.query, "&") {
			_, v, ok := strings.Cut(it, "=")
			if !ok {
				v = it
			}
			out = append(out, v)
			if u, err := url.QueryUnescape(v); err == nil {
				out = append(out, u)
			}
		}
	}
	if p.hasFragment {
		out = append(out, p.fragment)
	}
	kept := strings.Split(maskPath(p.path, hostname(p.host)), "/")
	for i, s := range strings.Split(p.path, "/") {
		if i < len(kept) && kept[i] == Marker && s != "" {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }
