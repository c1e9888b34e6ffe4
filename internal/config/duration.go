package config

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"cronvisor/internal/base/schedule"
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

// maxDuration is the longest duration there is.
const maxDuration = schedule.MaxDuration

// ErrDurationRange is ParseDuration's error for a well-formed duration
// longer than the longest there is.
var ErrDurationRange = schedule.ErrDurationRange

// ParseDuration reads a duration as jobs.yaml, `@every` and `history
// --since` take it: see schedule.ParseDuration.
func ParseDuration(s string) (time.Duration, error) { return schedule.ParseDuration(s) }

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
