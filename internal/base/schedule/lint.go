package schedule

import (
	"fmt"
	"strings"
	"time"
)

// NextN returns the next n fires after from, fewer if the schedule stops.
func NextN(s Schedule, from time.Time, n int) []time.Time {
	var fires []time.Time
	for t := from; len(fires) < n; {
		t = s.Next(t)
		if t.IsZero() {
			break
		}
		fires = append(fires, t)
	}
	return fires
}

// MinInterval returns the smallest gap between consecutive fires among the
// next samples fires after from, or 0 if there are fewer than two. DST can
// make it smaller than the nominal period (a fixed-time job moved to the end
// of a gap), which is exactly what a timeout check wants to know.
func MinInterval(s Schedule, from time.Time, samples int) time.Duration {
	fires := NextN(s, from, samples)
	var least time.Duration
	for i := 1; i < len(fires); i++ {
		if d := fires[i].Sub(fires[i-1]); i == 1 || d < least {
			least = d
		}
	}
	return least
}

// Lint returns warnings for a schedule that parses but probably does not do
// what its author meant: it never fires; as a fixed-time job it hits a DST
// gap or fold of its zone in the year after from; or its 6 fields look like
// minute-first cron with a trailing year. It returns nil for an expression
// Parse rejects, since Parse's error already says what is wrong.
func Lint(expr string, loc *time.Location, from time.Time) []string {
	return LintFor(expr, loc, "", from)
}

// LintFor is Lint for the job called seed, whose `H` and `~` draw from it.
func LintFor(expr string, loc *time.Location, seed string, from time.Time) []string {
	s, err := ParseFor(expr, loc, seed)
	if err != nil {
		return nil
	}
	var warnings []string
	if w := yearFieldWarning(expr); w != "" {
		warnings = append(warnings, w)
	}
	if s.Next(from).IsZero() {
		return append(warnings, fmt.Sprintf(
			"%q never fires: none of its months has the day of month it names", expr))
	}
	if cs, ok := s.(*cronSchedule); ok {
		if w := cs.dayRuleWarning(expr); w != "" {
			warnings = append(warnings, w)
		}
		if cs.fixed {
			warnings = append(warnings, cs.dstWarnings(from, from.AddDate(1, 0, 0))...)
		}
	}
	return warnings
}

// yearFieldWarning catches 6 fields written by someone who reads them as
// minute hour dom month dow YEAR (AWS EventBridge, or Quartz minus seconds):
// `0 12 * * ? *` is meant as daily at noon but here runs hourly at :12.
// It fires only when the first field is 0 (a seconds field that adds
// nothing), the last is `*` or `?` (a plausible year), and the first five
// fields read as minute-first cron mean something else.
func yearFieldWarning(expr string) string {
	s := strings.TrimSpace(expr)
	_, body, _ := splitZone(s)
	f := strings.Fields(body)
	if len(f) != 6 || f[0] != "0" || (f[5] != "*" && f[5] != "?") {
		return ""
	}
	asYear, err := parseCron(expr, f[:5], time.UTC, "")
	if err != nil {
		return ""
	}
	asSeconds, err := parseCron(expr, f, time.UTC, "")
	if err != nil || sameFields(asYear.(*cronSchedule), asSeconds.(*cronSchedule)) {
		return ""
	}
	same := strings.TrimSuffix(s, body) + strings.Join(f[1:], " ")
	return fmt.Sprintf("%q: 6 fields are read as SECONDS minutes hours dom month dow; "+
		"if the last field was meant as a year, drop it (if not, %q is the same schedule)", expr, same)
}

// sameFields reports whether two cron schedules match the same instants.
func sameFields(x, y *cronSchedule) bool {
	return x.second == y.second && x.minute == y.minute && x.hour == y.hour &&
		x.dom == y.dom && x.month == y.month && x.dow == y.dow &&
		x.domStar == y.domStar && x.dowStar == y.dowStar &&
		x.domRules == y.domRules && x.dowRules == y.dowRules
}

// dayRuleWarning spells out cron's day rule where it surprises: with both
// day fields restricted, a day matching either runs.
func (s *cronSchedule) dayRuleWarning(expr string) string {
	const allDays, allWeekdays = 1<<32 - 2, 1<<7 - 1
	if s.domStar || s.dowStar || s.dom == allDays && s.dow == allWeekdays {
		return ""
	}
	return fmt.Sprintf("%q restricts both day fields: as in cron it runs when EITHER the day of month OR the day of week matches, "+
		"not only when both do (to require both, start the day-of-month field with `*`, as in `*/2`)", expr)
}

// dstWarnings describes each change of offset in [from, until) that moves
// or merges a fire of this fixed-time job.
func (s *cronSchedule) dstWarnings(from, until time.Time) []string {
	var warnings []string
	t := from.UTC()
	for i := 0; i < maxSegments; i++ {
		at := boundaryAfter(s.loc, t)
		if at.IsZero() || !at.Before(until) {
			break
		}
		prev, off := offsetAt(s.loc, t), offsetAt(s.loc, at)
		switch {
		case prev < off:
			if w := s.gapWarning(at, prev, off); w != "" {
				warnings = append(warnings, w)
			}
		case prev > off:
			if w := s.foldWarning(at, prev, off); w != "" {
				warnings = append(warnings, w)
			}
		}
		t = at
	}
	return warnings
}

// gapWarning: wall times in [old wall, new wall) of a spring-forward
// transition do not exist; the job runs each of them right at the jump.
func (s *cronSchedule) gapWarning(at time.Time, prev, off int) string {
	lost := s.matchesIn(civil(at, prev), civil(at, off))
	if len(lost) == 0 {
		return ""
	}
	if len(lost) == 1 {
		return fmt.Sprintf("%s does not exist on %s in %s; runs at %s instead",
			clock(lost[0]), lost[0].Format(time.DateOnly), s.loc, clock(civil(at, off)))
	}
	return fmt.Sprintf("%s do not exist on %s in %s; each runs at %s instead, one after the other (as cron runs them)",
		clockList(lost), lost[0].Format(time.DateOnly), s.loc, clock(civil(at, off)))
}

// foldWarning: wall times in [new wall, old wall) of a fall-back transition
// occur twice; the job runs only at the first occurrence.
func (s *cronSchedule) foldWarning(at time.Time, prev, off int) string {
	twice := s.matchesIn(civil(at, off), civil(at, prev))
	if len(twice) == 0 {
		return ""
	}
	first := twice[0].Add(-time.Duration(prev) * time.Second).In(s.loc)
	second := twice[0].Add(-time.Duration(off) * time.Second).In(s.loc)
	if len(twice) == 1 {
		return fmt.Sprintf("%s occurs twice on %s in %s; runs once, at %s %s (not again at %s %s)",
			clock(twice[0]), twice[0].Format(time.DateOnly), s.loc,
			clock(twice[0]), first.Format("MST"), clock(twice[0]), second.Format("MST"))
	}
	return fmt.Sprintf("%s occur twice on %s in %s; each runs once, in %s (not again in %s)",
		clockList(twice), twice[0].Format(time.DateOnly), s.loc, first.Format("MST"), second.Format("MST"))
}

// matchesIn lists the wall times in [lo, hi) the fields match.
func (s *cronSchedule) matchesIn(lo, hi time.Time) []time.Time {
	var out []time.Time
	for c, ok := s.nextCivil(lo, hi); ok; c, ok = s.nextCivil(c.Add(time.Second), hi) {
		out = append(out, c)
	}
	return out
}

// clock formats a wall time as 15:04, with seconds only when they matter.
func clock(c time.Time) string {
	if c.Second() != 0 {
		return c.Format("15:04:05")
	}
	return c.Format("15:04")
}

// clockList formats up to three wall times and counts the rest, since a
// seconds field of `*` can put 3600 of them into one gap.
func clockList(cs []time.Time) string {
	const shown = 3
	var parts []string
	for i, c := range cs {
		if i == shown {
			parts = append(parts, fmt.Sprintf("and %d more", len(cs)-shown))
			break
		}
		parts = append(parts, clock(c))
	}
	return strings.Join(parts, ", ")
}
