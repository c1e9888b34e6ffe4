package schedule

import "time"

// recentWindow is how long after a change of offset that change still
// shapes fires: crond handles a jump of up to 3 hours as DST (a fall back
// holds fixed-time jobs back for as long as the wall times repeat), so 4
// hours covers every case.
const recentWindow = 4 * time.Hour

// untrustedProbe and untrustedSpan bound the search for the next change of
// offset where time.Time.ZoneBounds cannot be trusted (see boundaryAfter).
const (
	untrustedProbe = time.Hour
	untrustedSpan  = 72 * time.Hour
)

// offsetAt returns the zone's offset, in seconds east of UTC, at u.
func offsetAt(loc *time.Location, u time.Time) int {
	_, off := u.In(loc).Zone()
	return off
}

// boundaryAfter returns an instant after u before which the zone's offset
// does not change (zero: it never changes again). It may be a boundary
// where nothing changes, such as the new year from which Go extends a
// zone's rules.
//
// ZoneBounds' end is not trusted when it does not lie after u: Go's rule
// extension past a zone's last listed transition can report the end of a
// leap year a day early, before the instant asked about, which once made
// schedules stop for good on 31 December. Then the next change is found by
// probing the offset hour by hour.
func boundaryAfter(loc *time.Location, u time.Time) time.Time {
	_, end := u.In(loc).ZoneBounds()
	if end.IsZero() || end.After(u) {
		return end
	}
	off := offsetAt(loc, u)
	last := u
	for v := u.Add(untrustedProbe); !v.After(u.Add(untrustedSpan)); v = v.Add(untrustedProbe) {
		if offsetAt(loc, v) != off {
			return firstWith(loc, last, v, offsetAt(loc, v))
		}
		if _, e := v.In(loc).ZoneBounds(); e.IsZero() || e.After(v) {
			return v
		}
		last = v
	}
	return last
}

// recentChange finds a change of offset in (t-window, t]: the instant it
// took effect and the offset before it.
func recentChange(loc *time.Location, t time.Time, window time.Duration) (at time.Time, prev int, ok bool) {
	off := offsetAt(loc, t)
	lo := t.Add(-window)
	if prev = offsetAt(loc, lo); prev == off {
		return time.Time{}, 0, false
	}
	at = firstWith(loc, lo, t, off)
	return at, offsetAt(loc, at.Add(-time.Second)), true
}

// firstWith returns the first whole second in (lo, hi] at which the offset
// is off, given that it is not at lo and is at hi. Offsets change on whole
// seconds.
func firstWith(loc *time.Location, lo, hi time.Time, off int) time.Time {
	a, b := lo.Unix(), hi.Unix()
	if hi.Nanosecond() != 0 {
		b++
	}
	for b-a > 1 {
		mid := a + (b-a)/2
		if offsetAt(loc, time.Unix(mid, 0)) == off {
			b = mid
		} else {
			a = mid
		}
	}
	return time.Unix(b, 0).UTC()
}

// floorMod is a modulo whose result has the sign of b (non-negative here).
func floorMod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}
