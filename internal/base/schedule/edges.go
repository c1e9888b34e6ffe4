package schedule

import (
	"fmt"
	"time"
)

// Edge is a change of a schedule's zone offset within a window, and what
// it does to the schedule's fires (cron's rules, see cronSchedule).
type Edge struct {
	At      time.Time     // the instant the offset changes
	Forward bool          // spring forward: wall times are skipped
	Jump    time.Duration // how far the wall clock moves
	// Effect says which fires the change moves, merges or drops, "" when
	// it touches none of them.
	Effect string
}

// Edges lists the changes of offset in [from, until) of s's zone, each
// with what it does to s's fires. A schedule of `@every` has none: it
// counts real time, not wall time.
func Edges(s Schedule, from, until time.Time) []Edge {
	cs, ok := s.(*cronSchedule)
	if !ok {
		return nil
	}
	var edges []Edge
	t := from.UTC()
	for i := 0; i < maxSegments; i++ {
		at := boundaryAfter(cs.loc, t)
		if at.IsZero() || !at.Before(until) {
			break
		}
		prev, off := offsetAt(cs.loc, t), offsetAt(cs.loc, at)
		if prev != off {
			e := Edge{At: at, Forward: off > prev, Jump: time.Duration(off-prev) * time.Second}
			e.Effect = cs.edgeEffect(at, prev, off)
			edges = append(edges, e)
		}
		t = at
	}
	return edges
}

// edgeEffect is what the change at at does to s's fires: the lint's
// words for a fixed-time job; for a wildcard one, the fires skipped in
// a gap or run in both passes of a fold.
func (s *cronSchedule) edgeEffect(at time.Time, prev, off int) string {
	jump := off - prev
	if jump > 3*3600 || jump < -3*3600 || jump > 0 && jump <= 5*60 {
		return "" // a clock step, or a short jump that runs every minute
	}
	if s.fixed {
		if off > prev {
			return s.gapWarning(at, prev, off)
		}
		return s.foldWarning(at, prev, off)
	}
	if off > prev {
		lost := s.matchesIn(civil(at, prev), civil(at, off))
		if len(lost) == 0 {
			return ""
		}
		return fmt.Sprintf("%s do not exist on %s in %s; %d fire(s) of this wildcard job are skipped, the next runs at %s",
			clockList(lost), lost[0].Format(time.DateOnly), s.loc, len(lost), clock(civil(at, off)))
	}
	twice := s.matchesIn(civil(at, off), civil(at, prev))
	if len(twice) == 0 {
		return ""
	}
	return fmt.Sprintf("%s occur twice on %s in %s; this wildcard job runs in both passes (%d extra fire(s))",
		clockList(twice), twice[0].Format(time.DateOnly), s.loc, len(twice))
}
