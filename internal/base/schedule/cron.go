package schedule

import (
	"math/bits"
	"time"
)

// horizon bounds the search of Next: a schedule with no fire within it is
// treated as never firing again. The longest gap a satisfiable schedule
// can have is a date on a weekday under the day rule's AND (`0 0 29 2 */7`,
// the 29th of February on a Sunday): 28 years, and 40 across a century
// that is not a leap year (2096 to 2136); 41 years cover it, while an
// impossible date such as `0 0 31 2 *` is given up on after a few
// thousand cheap steps.
const horizon = 41 * 366 * 24 * time.Hour

// maxSegments and maxSteps are safety nets only: within the horizon a zone
// has about a hundred changes of offset (and as many year boundaries where
// Go extends its rules) and a field search some thousands of steps, but
// Next must end even for instants where time arithmetic overflows.
const (
	maxSegments = 1024
	maxSteps    = 200_000
)

// cronSchedule fires at the wall-clock times its fields match, in loc.
//
// DST follows crond's main loop (cronie's cron.c), which counts wall-clock
// minutes and, when the count jumps at a change of the zone's offset,
// decides by the size of the jump what to run at that moment:
//
//   - forward by 5 minutes or less: every minute skipped, for every job;
//   - forward by up to 3 hours (spring forward): wildcard jobs once, for the
//     new minute, and fixed-time jobs for every minute skipped and the new
//     one, so `0,30 2 * * *` runs twice right after 02:00 becomes 03:00;
//   - back by up to 3 hours (fall back): wildcard jobs run in both passes of
//     the repeated wall times, fixed-time jobs only in the first;
//   - by more than 3 hours either way: the jump is taken as a clock step and
//     only the new minute runs, for every job.
//
// A job is fixed-time unless its minute or hour field begins with `*` (or
// `?`): `0-59 2 * * *` is fixed, `*/15 2 * * *` and `0 * * * *` are not.
// The fires that crond runs together at a jump get distinct slots a
// nanosecond apart, from the jump's instant on, in the order of the wall
// times they stand for.
type cronSchedule struct {
	second, minute, hour, dom, month, dow uint64
	domStar, dowStar                      bool
	domRules, dowRules                    dayRules // L, W and # (dayrules.go)
	fixed                                 bool
	loc                                   *time.Location
}

// segment is a stretch of the timeline with one zone offset: from start
// (where the offset became off, having been prev) to end (zero: for ever).
// start is zero where no change of offset still shapes the fires.
type segment struct {
	start, end time.Time
	prev, off  int
}

// Next returns the first slot after t, in the schedule's zone. It walks the
// timeline one offset at a time: inside a segment wall time and real time
// move together, so a plain field search on wall time is exact.
func (s *cronSchedule) Next(t time.Time) time.Time {
	t = t.UTC()
	end := t.Add(horizon)
	seg := s.segmentOf(t)
	for i := 0; i < maxSegments; i++ {
		if fire, ok := s.inSegment(seg, t, end); ok {
			return fire.In(s.loc)
		}
		if seg.end.IsZero() || !seg.end.Before(end) {
			break
		}
		seg = s.segmentFrom(seg.end, seg.off)
	}
	return time.Time{}
}

// segmentOf returns the segment that holds t, with the change of offset
// that began it when that change can still shape fires at t (see recentWindow).
func (s *cronSchedule) segmentOf(t time.Time) segment {
	seg := segment{end: boundaryAfter(s.loc, t), off: offsetAt(s.loc, t)}
	if at, prev, ok := recentChange(s.loc, t, recentWindow); ok {
		seg.start, seg.prev = at, prev
	}
	return seg
}

// segmentFrom returns the segment that begins at boundary at.
func (s *cronSchedule) segmentFrom(at time.Time, prev int) segment {
	return segment{start: at, end: boundaryAfter(s.loc, at), prev: prev, off: offsetAt(s.loc, at)}
}

// inSegment returns the first fire after t (and before end) in seg.
func (s *cronSchedule) inSegment(seg segment, t, end time.Time) (time.Time, bool) {
	from := t.Truncate(time.Second).Add(time.Second)
	if seg.start.After(from) {
		from = seg.start
	}
	floor := civil(from, seg.off)
	if !seg.start.IsZero() && seg.prev != seg.off {
		j := newJump(seg.start, seg.prev, seg.off)
		lo, hi, resume := s.atJump(j)
		if t.Before(j.at.Add(hi.Sub(lo) / time.Second)) {
			i := 0
			if !t.Before(j.at) {
				i = int(t.Sub(j.at)) + 1
			}
			if _, ok := s.nthCivil(lo, hi, i); ok {
				return j.at.Add(time.Duration(i)), true
			}
		}
		floor = latest(floor, resume, civil(j.at, seg.off).Add(time.Second))
	}
	stop := end
	if !seg.end.IsZero() && seg.end.Before(end) {
		stop = seg.end
	}
	if c, ok := s.nextCivil(floor, civil(stop, seg.off)); ok {
		return c.Add(-time.Duration(seg.off) * time.Second), true
	}
	return time.Time{}, false
}

// jump is crond's view of one change of offset: at is its first wake-up at
// or after the change (the change itself when both offsets are whole
// minutes), lastMin the wall-clock minute it had processed before, newMin
// the wall-clock minute it reads at that wake-up; minutes count from the
// epoch of wall time, as set_time computes clockTime.
type jump struct {
	at              time.Time
	lastMin, newMin int64
}

func newJump(change time.Time, prev, off int) jump {
	sec := change.Unix()
	wake := sec + floorMod(-(sec+int64(prev)), 60) // next wall minute at the old offset
	return jump{
		at:      time.Unix(wake, 0).UTC(),
		lastMin: floorDiv(wake+int64(prev), 60) - 1,
		newMin:  floorDiv(wake+int64(off), 60),
	}
}

// atJump returns the wall times [lo, hi] whose fires crond runs at the
// jump's wake-up (lo after hi: none), and the wall time from which the job
// fires normally again.
func (s *cronSchedule) atJump(j jump) (lo, hi, resume time.Time) {
	minute := func(m int64) time.Time { return time.Unix(m*60, 0).UTC() }
	newMin := minute(j.newMin)
	skipped := minute(j.lastMin + 1)
	resume = newMin.Add(time.Second)
	switch d := j.newMin - j.lastMin; {
	case d > 3*60 || d < -3*60 || d == 1: // a clock step, or no jump at all
		return newMin, newMin, resume
	case d > 5 && !s.fixed: // spring forward, wildcard job
		return newMin, newMin, resume
	case d > 1: // every job after a small jump; fixed-time after a larger one
		return skipped, newMin, resume
	case s.fixed: // fall back: the repeated wall times already ran
		return newMin, newMin.Add(-time.Second), skipped
	default:
		return newMin, newMin, resume
	}
}

// nthCivil returns the i-th (from 0) wall time in [lo, hi] the fields match.
func (s *cronSchedule) nthCivil(lo, hi time.Time, i int) (time.Time, bool) {
	limit := hi.Add(time.Second)
	c, ok := s.nextCivil(lo, limit)
	for ; ok && i > 0; i-- {
		c, ok = s.nextCivil(c.Add(time.Second), limit)
	}
	return c, ok
}

func latest(ts ...time.Time) time.Time {
	m := ts[0]
	for _, t := range ts[1:] {
		if t.After(m) {
			m = t
		}
	}
	return m
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

// dayMatches applies cron's day rule: when either day field begins with
// `*`, both must match (`0 0 */2 * MON` runs on odd-dated Mondays); when
// both are restricted, either may (`0 0 1,15 * MON`: the 1st, the 15th and
// every Monday).
func (s *cronSchedule) dayMatches(c time.Time) bool {
	domMatch := has(s.dom, c.Day()) || s.domRules.any() && s.domRules.domMatch(c)
	dowMatch := has(s.dow, int(c.Weekday())) || s.dowRules.any() && s.dowRules.dowMatch(c)
	if s.domStar || s.dowStar {
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
	rest := mask >> uint(cur+1)
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
