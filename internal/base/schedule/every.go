package schedule

import (
	"math"
	"time"
)

// everySchedule fires at whole multiples of period seconds since the Unix
// epoch. Counting from the epoch rather than from start-up makes the slots
// independent of zone and of when a supervisor started, so every supervisor
// sharing a lock agrees on them; DST cannot move them either.
type everySchedule struct {
	period int64 // seconds, >= 1
	loc    *time.Location
}

// Next returns the smallest multiple of the period after t, in the
// schedule's zone.
func (s *everySchedule) Next(t time.Time) time.Time {
	// t.Unix() rounds down, so the multiple after it is also after t's
	// sub-second part.
	k := floorDiv(t.Unix(), s.period) + 1
	if k > math.MaxInt64/s.period {
		return time.Time{}
	}
	return time.Unix(k*s.period, 0).In(s.loc)
}

// floorDiv divides rounding toward minus infinity, so instants before 1970
// get the same slots as after it.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
