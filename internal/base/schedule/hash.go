package schedule

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A drawn value (Jenkins' `H`, cronie's `~`, a job's jitter) comes from a
// hash of the job's name, never from a random source or process state: every
// host that reads the same jobs.yaml, and every restart, draws the same
// value, so a fleet aims at one instant for each slot. cronie draws `~` at
// random each time it loads the crontab; cronvisor's draw is deterministic.

// draw returns a number in [0, n) from the SHA-256 of the parts, each
// ended by a NUL so that ("ab", "c") and ("a", "bc") differ.
func draw(n uint64, parts ...string) uint64 {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	sum := h.Sum(nil)
	return binary.BigEndian.Uint64(sum[:8]) % n
}

// Hashed reports whether expr may hold a value drawn from the job's name
// (`H` or `~`), so that its Schedule may depend on ParseFor's seed. It
// looks at the text only, and also says yes for a name such as THU or a
// zone such as Asia/Ho_Chi_Minh: callers use it to share parses, where a
// yes too many only costs a parse.
func Hashed(expr string) bool {
	return strings.ContainsAny(expr, "H~")
}

// Delay is the jitter of one fire: a duration in [0, max) drawn from the
// job's name and the slot, the same on every host and across restarts, and
// different from slot to slot. It is a whole number of seconds when max is
// at least a second, so that the fire instant prints exactly in RFC 3339.
func Delay(job string, slot time.Time, max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	at := strconv.FormatInt(slot.UnixNano(), 10)
	if max < time.Second {
		return time.Duration(draw(uint64(max), "jitter", job, at))
	}
	secs := uint64((max + time.Second - 1) / time.Second)
	return time.Duration(draw(secs, "jitter", job, at)) * time.Second
}

// parseHashed reads Jenkins' forms: `H` (one value in the field's range,
// 1-28 for the day of month), `H(a-b)` (one value in a-b), `H/n` and
// `H(a-b)/n` (every n-th value from a start drawn among the first n). The
// draw is seeded by the job's name and the field, so that minute and hour
// of one job differ, and two jobs spread.
func parseHashed(f fieldSpec, elem, seed string) (uint64, error) {
	lo, hi := f.min, f.drawMax
	rest := elem[1:]
	if inner, ok := strings.CutPrefix(rest, "("); ok {
		rng, after, closed := strings.Cut(inner, ")")
		from, to, isRange := strings.Cut(rng, "-")
		if !closed || !isRange {
			return 0, fmt.Errorf("%q: H takes a range in parentheses, H(a-b)", elem)
		}
		var err error
		if lo, err = parseValue(f, from, elem); err != nil {
			return 0, err
		}
		if hi, err = parseValue(f, to, elem); err != nil {
			return 0, err
		}
		if lo > hi {
			return 0, fmt.Errorf("%q: the range runs backwards (%d is above %d)", elem, lo, hi)
		}
		rest = after
	}
	span := hi - lo + 1
	if rest == "" {
		return 1 << uint(lo+int(draw(uint64(span), seed, f.name))), nil
	}
	stepText, ok := strings.CutPrefix(rest, "/")
	if !ok {
		return 0, fmt.Errorf("%q: H is followed by nothing, a range H(a-b) or a step H/n", elem)
	}
	step, err := parseStep(stepText, elem)
	if err != nil {
		return 0, err
	}
	step = min(step, span) // the same values, and v += step cannot overflow
	var bits uint64
	for v := lo + int(draw(uint64(step), seed, f.name)); v <= hi; v += step {
		bits |= 1 << uint(v)
	}
	return bits, nil
}

// parseTilde reads cronie's `a~b`: one value in a-b, either end left out
// meaning the field's first or last value (`~` alone: the whole field; for
// the day of week 0-6). cronie has no step after `~`; H/n is the form that
// steps from a drawn start.
func parseTilde(f fieldSpec, elem, seed string) (uint64, error) {
	if strings.ContainsAny(elem, "/-") {
		return 0, fmt.Errorf("%q: ~ takes no step or range, as in cronie (a~b, ~b, a~ or ~); for a drawn start with a step write H/n or H(a-b)/n", elem)
	}
	from, to, _ := strings.Cut(elem, "~")
	lo, hi := f.min, f.max
	if f.max == 7 {
		hi = 6
	}
	var err error
	if from != "" {
		if lo, err = parseValue(f, from, elem); err != nil {
			return 0, err
		}
	}
	if to != "" {
		if hi, err = parseValue(f, to, elem); err != nil {
			return 0, err
		}
	}
	if lo > hi {
		return 0, fmt.Errorf("%q: the range runs backwards (%d is above %d)", elem, lo, hi)
	}
	return 1 << uint(lo+int(draw(uint64(hi-lo+1), seed, f.name))), nil
}
