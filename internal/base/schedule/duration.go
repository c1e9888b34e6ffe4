package schedule

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// durationSyntax is what ParseDuration reads, whatever the size of the
// numbers.
var durationSyntax = regexp.MustCompile(`^[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h)|[0-9]+[dw])+$`)

// MaxDuration is the longest duration ParseDuration returns.
const MaxDuration = time.Duration(math.MaxInt64)

// ErrDurationRange is ParseDuration's error for a well-formed duration
// longer than MaxDuration (about 292 years).
var ErrDurationRange = errors.New("beyond the longest supported duration")

// dayUnits are the parts ParseDuration adds to Go's: whole days and weeks.
var dayUnits = regexp.MustCompile(`[0-9]+[dw]`)

// ParseDuration reads a duration as jobs.yaml, `@every` and `history
// --since` take it: Go's (90s, 1h30m) and whole days and weeks (1d, 2w, 1d12h), a day
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
		if err != nil || n > int64(MaxDuration/unit) || days > MaxDuration-time.Duration(n)*unit {
			return 0, ErrDurationRange
		}
		days += time.Duration(n) * unit
	}
	var rest time.Duration
	if r := dayUnits.ReplaceAllString(body, ""); r != "" {
		v, err := time.ParseDuration(r)
		if err != nil || v > MaxDuration-days {
			return 0, ErrDurationRange // the syntax was checked above
		}
		rest = v
	}
	return sign * (days + rest), nil
}
