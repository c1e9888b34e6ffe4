package config

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// isBareNumber reports whether s is a number without a unit: an optional
// sign, digits, then optionally a point and more digits. A hand-written
// match rather than a regexp, as every job's durations pass through here.
func isBareNumber(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	return i == len(s)
}

// durationSyntax is what ParseDuration reads, whatever the size of the
// numbers; maxDuration the longest it returns.
var durationSyntax = regexp.MustCompile(`^[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h)|[0-9]+[dw])+$`)

const maxDuration = time.Duration(math.MaxInt64)

// ErrDurationRange is ParseDuration's error for a well-formed duration
// longer than maxDuration.
var ErrDurationRange = errors.New("beyond the longest supported duration")

// dayUnits are the parts ParseDuration adds to Go's: whole days and weeks.
var dayUnits = regexp.MustCompile(`[0-9]+[dw]`)

// ParseDuration reads a duration as jobs.yaml and `history --since` take
// it: Go's (90s, 1h30m) and whole days and weeks (1d, 2w, 1d12h), a day
// being 24 hours (a schedule's zone does not stretch it at DST). A
// negative duration is returned as such: callers refuse it in their words.
func ParseDuration(s string) (time.Duration, error) {
	if !strings.ContainsAny(s, "dw") {
		v, err := time.ParseDuration(s)
		if err != nil && durationSyntax.MatchString(s) {
			return 0, ErrDurationRange
		}
		return v, err
	}
	if !durationSyntax.MatchString(s) {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	sign, body := time.Duration(1), s
	if body[0] == '-' || body[0] == '+' {
		if body[0] == '-' {
			sign = -1
		}
		body = body[1:]
	}
	var days time.Duration
	for _, part := range dayUnits.FindAllString(body, -1) {
		n, err := strconv.ParseInt(part[:len(part)-1], 10, 64)
		unit := 24 * time.Hour
		if part[len(part)-1] == 'w' {
			unit *= 7
		}
		if err != nil || n > int64(maxDuration/unit) || days > maxDuration-time.Duration(n)*unit {
			return 0, ErrDurationRange
		}
		days += time.Duration(n) * unit
	}
	var rest time.Duration
	if r := dayUnits.ReplaceAllString(body, ""); r != "" {
		v, err := time.ParseDuration(r)
		if err != nil || v > maxDuration-days {
			return 0, ErrDurationRange // the syntax was checked above
		}
		rest = v
	}
	return sign * (days + rest), nil
}

// duration decodes a duration (90s, 1h30m, 1d; see ParseDuration). A bare
// number other than 0 is refused: 30 could mean seconds or minutes, and
// guessing wrong is how a timeout ends up 60 times too short.
func (d *decoder) duration(key string, n *yaml.Node) (time.Duration, bool) {
	rn := resolve(n)
	if rn.Kind != yaml.ScalarNode || isNull(rn) {
		d.errorf(n, "%s: expected a duration like 90s, found %s", key, describe(n))
		return 0, false
	}
	s := strings.TrimSpace(rn.Value)
	if isBareNumber(s) {
		if f, err := strconv.ParseFloat(s, 64); err == nil && f == 0 {
			return 0, true
		}
		d.errorf(n, "%s: %s has no unit; write %q for seconds (or use m, h, d)", key, s, s+"s")
		return 0, false
	}
	v, err := ParseDuration(s)
	if errors.Is(err, ErrDurationRange) {
		d.errorf(n, "%s: %s is beyond the longest supported duration, %v (about 292 years)", key, rn.Value, maxDuration)
		return 0, false
	}
	if err != nil {
		d.errorf(n, "%s: invalid duration %q; write it like 90s, 10m, 1h30m or 1d", key, rn.Value)
		return 0, false
	}
	if v < 0 {
		d.errorf(n, "%s: duration %q is negative", key, rn.Value)
		return 0, false
	}
	return v, true
}
