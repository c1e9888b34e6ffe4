// Package schedule is pure time arithmetic: given a schedule expression, a
// zone and an instant, it computes the next fire. It does no I/O (beyond
// time.LoadLocation for a CRON_TZ= prefix) and never reads the wall clock.
//
// Accepted syntax:
//
//	MIN HOUR DOM MONTH DOW             5 fields, seconds are 0
//	SEC MIN HOUR DOM MONTH DOW         6 fields, leading seconds
//	@yearly @annually @monthly @weekly @daily @midnight @hourly
//	@every DURATION                    Go duration, >= 1s, whole seconds
//	CRON_TZ=Zone EXPR, TZ=Zone EXPR    evaluate EXPR in Zone instead
//
// Field syntax (lists, ranges, steps, month and weekday names, `?`) is
// robfig/cron/v3's, including its day rule: when both day-of-month and
// day-of-week are restricted a day matching either fires; when one of them
// is `*` or `?` both must match.
package schedule

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/robfig/cron/v3"
)

// ErrBadSchedule is wrapped by every error Parse returns.
var ErrBadSchedule = errors.New("bad schedule")

// Schedule yields fire instants (slots).
type Schedule interface {
	// Next returns the first slot strictly after t, or the zero time when the
	// schedule never fires again. The result is shown in the schedule's
	// zone, whatever t's location.
	Next(t time.Time) time.Time
}

// cronOptions is the syntax robfig's parser accepts for us. The @every
// descriptor and the zone prefix never reach it: we handle both ourselves.
const cronOptions = cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom |
	cron.Month | cron.Dow | cron.Descriptor

// starBit is the bit robfig sets in a field mask written as `*` or `?`; the
// day rule depends on it. It is unexported there, so it is mirrored here.
const starBit = 1 << 63

// Parse parses a schedule expression evaluated in loc (time.Local if nil)
// unless a CRON_TZ= or TZ= prefix names another zone. Errors wrap
// ErrBadSchedule and quote the expression.
func Parse(expr string, loc *time.Location) (sched Schedule, err error) {
	defer func() {
		// A schedule comes from a config file; whatever robfig's parser does
		// with odd input, it must become an error, never a crash.
		if r := recover(); r != nil {
			sched, err = nil, bad(expr, "%v", r)
		}
	}()
	if loc == nil {
		loc = time.Local
	}
	s := strings.TrimSpace(expr)
	if s == "" {
		return nil, bad(expr, "empty expression")
	}
	zone, body, hasZone := splitZone(s)
	if hasZone {
		if loc, err = loadZone(expr, zone, body); err != nil {
			return nil, err
		}
	}
	fields := strings.Fields(body)
	switch {
	case fields[0] == "@every":
		return parseEvery(expr, fields, loc)
	case len(fields) == 7:
		return nil, bad(expr, "7 fields: a year field is not supported; use 5 fields (minute hour dom month dow) or 6 with leading seconds")
	}
	return parseCron(expr, body, fields, loc)
}

// splitZone splits a leading CRON_TZ=Zone or TZ=Zone off s.
func splitZone(s string) (zone, body string, ok bool) {
	for _, prefix := range [...]string{"CRON_TZ=", "TZ="} {
		rest, found := strings.CutPrefix(s, prefix)
		if !found {
			continue
		}
		i := strings.IndexFunc(rest, unicode.IsSpace)
		if i < 0 {
			return rest, "", true
		}
		return rest[:i], strings.TrimSpace(rest[i:]), true
	}
	return "", s, false
}

// loadZone resolves the zone of a prefix and checks what follows it.
func loadZone(expr, zone, body string) (*time.Location, error) {
	if zone == "" {
		return nil, bad(expr, "empty time zone in prefix")
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, bad(expr, "unknown time zone %q", zone)
	}
	if body == "" {
		return nil, bad(expr, "no schedule after the time zone prefix")
	}
	if _, _, again := splitZone(body); again {
		return nil, bad(expr, "more than one time zone prefix")
	}
	return loc, nil
}

// parseEvery parses `@every D`. D must be a whole number of seconds, at least
// one: slots are whole seconds everywhere else, and sub-second slots would
// make every supervisor race for the lock many times a second.
func parseEvery(expr string, fields []string, loc *time.Location) (Schedule, error) {
	if len(fields) != 2 {
		return nil, bad(expr, "@every takes exactly one duration, e.g. @every 5m")
	}
	d, err := time.ParseDuration(fields[1])
	switch {
	case err != nil:
		return nil, bad(expr, "%v", err)
	case d < time.Second:
		return nil, bad(expr, "@every %s: the interval must be at least 1s", fields[1])
	case d%time.Second != 0:
		return nil, bad(expr, "@every %s: the interval must be a whole number of seconds", fields[1])
	}
	return &everySchedule{period: int64(d / time.Second), loc: loc}, nil
}

// parseCron parses cron fields and descriptors with robfig's parser and keeps
// only its field bitmasks.
func parseCron(expr, body string, fields []string, loc *time.Location) (Schedule, error) {
	if n := len(fields); n == 5 || n == 6 {
		fields = slices.Clone(fields)
		fields[n-1] = sundaySeven(fields[n-1])
		body = strings.Join(fields, " ")
	}
	parsed, err := cron.NewParser(cronOptions).Parse(body)
	if err != nil {
		return nil, bad(expr, "%v", err)
	}
	spec, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return nil, bad(expr, "unsupported schedule")
	}
	s := &cronSchedule{
		second: spec.Second, minute: spec.Minute, hour: spec.Hour,
		dom: spec.Dom, month: spec.Month, dow: spec.Dow, loc: loc,
	}
	for _, f := range []struct {
		name string
		mask uint64
	}{
		{"second", s.second}, {"minute", s.minute}, {"hour", s.hour},
		{"day-of-month", s.dom}, {"month", s.month}, {"day-of-week", s.dow},
	} {
		// An empty list such as "," parses to no bits at all.
		if f.mask&^starBit == 0 {
			return nil, bad(expr, "the %s field matches no value", f.name)
		}
	}
	s.fixed = fixedTime(s, fields)
	return s, nil
}

// sundaySeven accepts 7 for Sunday in the day-of-week field, as Vixie cron
// and crontab(5) do; robfig's parser knows only 0. "7" becomes "0" and a
// range ending at 7 ("5-7") becomes "5-6,0". Anything else is left for the
// parser to judge.
func sundaySeven(dow string) string {
	parts := strings.Split(dow, ",")
	for i, p := range parts {
		switch {
		case p == "7":
			parts[i] = "0"
		case strings.HasSuffix(p, "-7") && !strings.Contains(p, "/"):
			from := strings.TrimSuffix(p, "-7")
			if from == "7" {
				parts[i] = "0"
			} else if from == "6" {
				parts[i] = "6,0"
			} else {
				parts[i] = from + "-6,0"
			}
		}
	}
	return strings.Join(parts, ",")
}

// fixedTime reports whether a job runs at fixed wall-clock times, which
// changes its DST handling (see cronSchedule). As in Vixie cron, a minute or
// hour field written with `*` or `?` (including `*/15`) makes the job a
// wildcard job; so does a field that covers its whole range (`0-23`).
// Descriptors other than @hourly are fixed-time.
func fixedTime(s *cronSchedule, fields []string) bool {
	const allMinutes, allHours = 1<<60 - 1, 1<<24 - 1
	if s.minute&allMinutes == allMinutes || s.hour&allHours == allHours {
		return false
	}
	if len(fields) < 5 { // a descriptor
		return true
	}
	minute, hour := fields[len(fields)-5], fields[len(fields)-4]
	return !strings.ContainsAny(minute, "*?") && !strings.ContainsAny(hour, "*?")
}

// bad builds a Parse error naming the expression.
func bad(expr, format string, args ...any) error {
	return fmt.Errorf("%w %q: %s", ErrBadSchedule, expr, fmt.Sprintf(format, args...))
}
