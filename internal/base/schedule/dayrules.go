package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// dayRules are the day-field elements cron has no word for, with the
// meaning Quartz gives them: in the day of month `L` (its last day), `L-N`
// (N days before it), `LW` (its last weekday) and `NW` (the weekday
// nearest the Nth, never in another month); in the day of week `DL` (the
// month's last D) and `D#K` (its Kth D). Days of week count as cron's (0
// or 7 Sunday, 5 Friday), not as Quartz's (1 Sunday).
type dayRules struct {
	last        bool   // L
	lastWeekday bool   // LW
	beforeLast  uint32 // L-N: bit N (1..30)
	nearest     uint32 // NW: bit N (1..31)
	lastDow     uint8  // DL: bit D (0..6)
	nth         [7]uint8
}

// any reports whether a rule is set.
func (r dayRules) any() bool {
	return r.last || r.lastWeekday || r.beforeLast != 0 || r.nearest != 0 || r.lastDow != 0 || r.nth != [7]uint8{}
}

// domMatch reports whether c's day of month is one the rules name.
func (r dayRules) domMatch(c time.Time) bool {
	y, mo, d := c.Date()
	n := daysIn(y, mo)
	switch {
	case r.last && d == n:
		return true
	case r.beforeLast != 0 && n-d >= 1 && r.beforeLast&(1<<uint(n-d)) != 0:
		return true
	case r.lastWeekday && d == nearestWeekday(y, mo, n, n):
		return true
	}
	for v := 1; v <= 31 && r.nearest>>uint(v) != 0; v++ {
		if r.nearest&(1<<uint(v)) != 0 && v <= n && d == nearestWeekday(y, mo, v, n) {
			return true
		}
	}
	return false
}

// dowMatch reports whether c's day is the month's last or Kth weekday
// the rules name.
func (r dayRules) dowMatch(c time.Time) bool {
	y, mo, d := c.Date()
	wd := int(c.Weekday())
	if r.lastDow&(1<<uint(wd)) != 0 && d+7 > daysIn(y, mo) {
		return true
	}
	return r.nth[wd]&(1<<uint((d-1)/7)) != 0
}

// nearestWeekday is the weekday nearest day d of the month (n days long),
// as Quartz's W: a Saturday moves to the Friday before, a Sunday to the
// Monday after, unless that leaves the month, when it moves the other way.
func nearestWeekday(y int, mo time.Month, d, n int) int {
	switch time.Date(y, mo, d, 0, 0, 0, 0, time.UTC).Weekday() {
	case time.Saturday:
		if d == 1 {
			return 3
		}
		return d - 1
	case time.Sunday:
		if d == n {
			return d - 2
		}
		return d + 1
	}
	return d
}

// daysIn is the length of month mo of year y.
func daysIn(y int, mo time.Month) int {
	return time.Date(y, mo+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// parseDayRule reads elem as one of the rules of field f (day of month or
// day of week) into r; ok is false when elem is no such rule.
func parseDayRule(f fieldSpec, elem string, r *dayRules) (ok bool, err error) {
	up := strings.ToUpper(elem)
	if f.name == domField.name {
		return parseDomRule(up, elem, r)
	}
	if f.name == dowField.name {
		return parseDowRule(up, elem, r)
	}
	return false, nil
}

// parseDomRule reads L, L-N, LW and NW.
func parseDomRule(up, elem string, r *dayRules) (bool, error) {
	switch {
	case up == "L":
		r.last = true
	case up == "LW":
		r.lastWeekday = true
	case strings.HasPrefix(up, "L-"):
		n, err := ruleNumber(up[2:], elem, 1, 30, "days before the last")
		if err != nil {
			return true, err
		}
		r.beforeLast |= 1 << uint(n)
	case strings.HasSuffix(up, "W") && up != "W":
		n, err := ruleNumber(up[:len(up)-1], elem, 1, 31, "day")
		if err != nil {
			return true, err
		}
		r.nearest |= 1 << uint(n)
	default:
		return false, nil
	}
	return true, nil
}

// parseDowRule reads DL and D#K (D a number 0-7 or a name).
func parseDowRule(up, elem string, r *dayRules) (bool, error) {
	day, k, isNth := strings.Cut(up, "#")
	if !isNth && (len(up) < 2 || !strings.HasSuffix(up, "L")) {
		if up == "L" {
			return true, fmt.Errorf("%q: L alone in the day of week is ambiguous (Quartz reads it as Saturday); write 5L for the last Friday", elem)
		}
		return false, nil
	}
	if !isNth {
		day = up[:len(up)-1]
	}
	d := nameIndex(dowField, day)
	if d < 0 {
		n, err := ruleNumber(day, elem, 0, 7, "day of week")
		if err != nil {
			return true, err
		}
		d = n % 7
	}
	if !isNth {
		r.lastDow |= 1 << uint(d)
		return true, nil
	}
	n, err := ruleNumber(k, elem, 1, 5, "week of the month")
	if err != nil {
		return true, err
	}
	r.nth[d] |= 1 << uint(n-1)
	return true, nil
}

// ruleNumber reads the number of a rule and checks it is within lo..hi.
func ruleNumber(s, elem string, lo, hi int, what string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || strings.TrimLeft(s, "0123456789") != "" || s == "" {
		return 0, fmt.Errorf("%q: %q is not a number (%s, %d-%d); a rule takes one value, not a range, list or step", elem, s, what, lo, hi)
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%q: %d is outside %d-%d (%s)", elem, n, lo, hi, what)
	}
	return n, nil
}
