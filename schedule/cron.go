package schedule

import (
	"math/bits"
	"time"
)

// horizon bounds the search of Next: a schedule with no fire within it is
// treated as never firing again. Eight years is the longest gap between two
// 29 Februaries (2096 to 2104), so `0 0 29 2 *` is always found, while an
// impossible date such as `0 0 31 2 *` is given up on after a few hundred
// cheap steps.
const horizon = 8 * 366 * 24 * time.Hour

// maxSegments and maxSteps are safety nets only: within the horizon a zone
// has a few dozen transitions and a field search a few thousand steps, but
// Next must end even for instants where time arithmetic overflows.
const (
	maxSegments = 512
	maxSteps    = 100_000
)

// cronSchedule fires at the wall-clock times its fields match, in loc.
//
// DST follows Vixie cron. A fixed-time job (see fixedTime) whose wall time
// falls into a spring-forward gap runs once, at the first instant after the
// gap; whose wall time occurs twice on a fall-back day runs once, at the
// first occurrence. A wildcard job follows real instants instead: wall times
// that do not exist are skipped, and in a repeated hour it fires in both
// passes, since each pass is a distinct real instant — an every-15-minutes
// job keeps firing every 15 real minutes through both transitions.
type cronSchedule struct {
	second, minute, hour, dom, month, dow uint64
	loc                                   *time.Location
	fixed                                 bool
}

// Next returns the first slot after t, in the schedule's zone. It walks the
// timeline one zone offset at a time: between two transitions wall time and
// real time move together, so a plain field search on wall time is exact.
func (s *cronSchedule) Next(t time.Time) time.Time {
	u := t.UTC().Truncate(time.Second).Add(time.Second)
	end := u.Add(horizon)
	for i := 0; i < maxSegments && u.Before(end); i++ {
		fire, next, ok := s.inSegment(u, end)
		if ok {
			return fire
		}
		if !next.After(u) {
			break
		}
		u = next
	}
	return time.Time{}
}

// inSegment looks for a fire in [u, end) before the zone's next transition.
// If there is none it returns the transition, where the search goes on.
func (s *cronSchedule) inSegment(u, end time.Time) (fire, next time.Time, ok bool) {
	local := u.In(s.loc)
	_, off := local.Zone()
	start, segEnd := local.ZoneBounds()
	from := civil(u, off)
	if s.fixed && !start.IsZero() {
		_, prev := start.Add(-time.Second).Zone()
		switch {
		case prev < off && u.Equal(start):
			// Spring forward: wall times in [old wall, new wall) never
			// happen; a fixed-time job due in them runs right at the jump.
			if _, ok := s.nextCivil(civil(start, prev), civil(start, off)); ok {
				return start, time.Time{}, true
			}
		case prev > off:
			// Fall back: wall times before the old wall time of the
			// transition already happened once, before it.
			if w := civil(start, prev); from.Before(w) {
				from = w
			}
		}
	}
	stop := end
	if !segEnd.IsZero() && segEnd.Before(end) {
		stop, next = segEnd, segEnd
	}
	if c, ok := s.nextCivil(from, civil(stop, off)); ok {
		return c.Add(-time.Duration(off) * time.Second).In(s.loc), time.Time{}, true
	}
	return time.Time{}, next, false
}

// civil returns the wall-clock reading of u at offset off (seconds east of
// UTC), as a UTC-labelled time so that arithmetic on it knows no DST.
func civil(u time.Time, off int) time.Time {
	return u.UTC().Add(time.Duration(off) * time.Second)
}

// nextCivil returns the first wall-clock time at or after c, and before
// limit, that the fields match. It skips a whole unit at a time: to the next
// allowed month, day, hour, minute or second; time.Date normalises a value
// one past the maximum into the next larger unit.
func (s *cronSchedule) nextCivil(c, limit time.Time) (time.Time, bool) {
	for i := 0; i < maxSteps && c.Before(limit); i++ {
		y, mo, d := c.Date()
		h, mi, sec := c.Clock()
		switch {
		case !has(s.month, int(mo)):
			c = date(y, time.Month(advance(s.month, int(mo), 12)), 1, 0, 0, 0)
		case !s.dayMatches(c):
			c = date(y, mo, d+1, 0, 0, 0)
		case !has(s.hour, h):
			c = date(y, mo, d, advance(s.hour, h, 23), 0, 0)
		case !has(s.minute, mi):
			c = date(y, mo, d, h, advance(s.minute, mi, 59), 0)
		case !has(s.second, sec):
			c = date(y, mo, d, h, mi, advance(s.second, sec, 59))
		default:
			return c, true
		}
	}
	return time.Time{}, false
}

// dayMatches applies robfig's (and Vixie's) day rule: both day fields must
// match when either is a star, otherwise either may.
func (s *cronSchedule) dayMatches(c time.Time) bool {
	domMatch := has(s.dom, c.Day())
	dowMatch := has(s.dow, int(c.Weekday()))
	if s.dom&starBit != 0 || s.dow&starBit != 0 {
		return domMatch && dowMatch
	}
	return domMatch || dowMatch
}

// has reports whether value v is set in a field mask.
func has(mask uint64, v int) bool {
	return mask&(1<<uint(v)) != 0
}

// advance returns the next value after cur set in mask, or max+1 when there
// is none, which time.Date carries into the next larger unit.
func advance(mask uint64, cur, max int) int {
	rest := (mask &^ starBit) >> uint(cur+1)
	if rest == 0 {
		return max + 1
	}
	if n := cur + 1 + bits.TrailingZeros64(rest); n <= max {
		return n
	}
	return max + 1
}

func date(y int, mo time.Month, d, h, mi, sec int) time.Time {
	return time.Date(y, mo, d, h, mi, sec, 0, time.UTC)
}
