// Package schedule is pure time arithmetic: given a schedule expression, a
// zone and an instant, it computes the next fire. It does no I/O (beyond
// time.LoadLocation for a CRON_TZ= prefix) and never reads the wall clock.
//
// Accepted syntax:
//
//	MIN HOUR DOM MONTH DOW             5 fields, seconds are 0
//	SEC MIN HOUR DOM MONTH DOW         6 fields, leading seconds
//	@yearly @annually @monthly @weekly @daily @midnight @hourly
//	@every DURATION                    Go duration or d, w; >= 1s, whole seconds
//	CRON_TZ=Zone EXPR, TZ=Zone EXPR    evaluate EXPR in Zone instead
//
// Five fields mean exactly what they mean to Vixie cron (cronie, Debian's
// cron): the field syntax of crontab(5), Sunday as 0 or 7, and its day
// rule: a day field whose text begins with `*` is unrestricted, and then
// both day fields must match; when both are restricted, either may. `?`
// is accepted as `*` (Quartz users write it), seconds as a sixth, leading
// field. DST follows crond's main loop (see cronSchedule).
//
// A field may also draw its value from the job's name (ParseFor): Jenkins'
// `H`, `H(a-b)`, `H/n`, `H(a-b)/n` and cronie's `a~b`, `~b`, `a~`, `~`.
// A drawn field is restricted for the day rule, as a written value is.
package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
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

// Parse parses a schedule expression evaluated in loc (time.Local if nil)
// unless a CRON_TZ= or TZ= prefix names another zone. Errors wrap
// ErrBadSchedule and quote the expression. It is ParseFor with the empty
// seed: `H` and `~` draw the values of a job with no name.
func Parse(expr string, loc *time.Location) (Schedule, error) {
	return ParseFor(expr, loc, "")
}

// ParseFor is Parse for the job called seed: the values of `H` and `~` are
// drawn from a hash of seed and the field (see hash.go), so that the same
// job name gives the same schedule on every host.
func ParseFor(expr string, loc *time.Location, seed string) (Schedule, error) {
	if loc == nil {
		loc = time.Local
	}
	s := strings.TrimSpace(expr)
	if s == "" {
		return nil, bad(expr, "empty expression")
	}
	zone, body, hasZone := splitZone(s)
	if hasZone {
		var err error
		if loc, err = loadZone(expr, zone, body); err != nil {
			return nil, err
		}
	}
	fields := strings.Fields(body)
	if fields[0] == "@every" {
		return parseEvery(expr, fields, loc)
	}
	return parseCron(expr, fields, loc, seed)
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
	d, err := ParseDuration(fields[1]) // 1d, 2w as jobs.yaml's durations
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

// descriptors are the @ forms crontab(5) has, as the fields they stand
// for; their star flags follow from the text exactly as cronie sets them
// (@hourly is a wildcard job, @weekly restricts only the day of week).
var descriptors = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// parseCron parses 5 or 6 cron fields, or a descriptor.
func parseCron(expr string, fields []string, loc *time.Location, seed string) (Schedule, error) {
	if strings.HasPrefix(fields[0], "@") {
		return parseDescriptor(expr, fields, loc)
	}
	if n := len(fields); n != 5 && n != 6 {
		return nil, bad(expr, "%s", fieldCountMessage(n))
	}
	specs := []fieldSpec{minuteField, hourField, domField, monthField, dowField}
	secs := parsedField{mask: 1} // 5 fields: second 0
	if len(fields) == 6 {
		specs = append([]fieldSpec{secondField}, specs...)
	}
	parsed := make([]parsedField, len(fields))
	for i, text := range fields {
		p, err := parseField(specs[i], text, seed)
		if err != nil {
			if hint := yearHint(fields); hint != "" && i == len(fields)-1 {
				return nil, bad(expr, "%s", hint)
			}
			return nil, bad(expr, "%v", err)
		}
		parsed[i] = p
	}
	if len(fields) == 6 {
		secs, parsed = parsed[0], parsed[1:]
	}
	minute, hour, dom, month, dow := parsed[0], parsed[1], parsed[2], parsed[3], parsed[4]
	if (dom.rules.any() && !dow.star) || (dow.rules.any() && !dom.star) {
		// cron's rule would run on EITHER field, Quartz's on the rule's
		// alone: no reading of both is safe to guess.
		return nil, bad(expr, "%s", "L, W and # need the other day field to be * or ?: with both restricted cron runs on either day, which is rarely what such a rule means")
	}
	return &cronSchedule{
		second: secs.mask, minute: minute.mask, hour: hour.mask,
		dom: dom.mask, month: month.mask, dow: dow.mask,
		domStar: dom.star, dowStar: dow.star,
		domRules: dom.rules, dowRules: dow.rules,
		// cron's DST classes: a job is "fixed-time" unless its minute or
		// hour field begins with `*` (crond's MIN_STAR and HR_STAR).
		fixed: !minute.star && !hour.star,
		loc:   loc,
	}, nil
}

// parseDescriptor parses @yearly ... @hourly and explains the ones cron has
// that a scheduler cannot honour.
func parseDescriptor(expr string, fields []string, loc *time.Location) (Schedule, error) {
	d := fields[0]
	if lower := strings.ToLower(d); lower != d && descriptors[lower] != "" {
		return nil, bad(expr, "descriptors are lower case, as in cron: %s", lower)
	}
	if d == "@reboot" {
		return nil, bad(expr, "@reboot is not supported: cronvisor fires on schedules (run it from your service manager)")
	}
	body, ok := descriptors[d]
	if !ok {
		return nil, bad(expr, "unknown descriptor %s (known: @yearly @annually @monthly @weekly @daily @midnight @hourly @every)", fields[0])
	}
	if len(fields) != 1 {
		return nil, bad(expr, "%s takes nothing after it", fields[0])
	}
	s, err := parseCron(expr, strings.Fields(body), loc, "")
	if err != nil {
		panic("schedule: descriptor " + d + ": " + err.Error()) // the table above is wrong
	}
	if cs := s.(*cronSchedule); d == "@daily" || d == "@midnight" || d == "@hourly" {
		// cronie sets no day flag for these; with both day fields full
		// the day rule gives every day either way.
		cs.domStar, cs.dowStar = false, false
	}
	return s, nil
}

// fieldCountMessage explains a wrong number of fields.
func fieldCountMessage(n int) string {
	const want = "expected 5 fields (MIN HOUR DOM MON DOW) or 6 with leading SECONDS"
	switch {
	case n == 7:
		return "7 fields: a year field is not supported; use 5 fields (minute hour dom month dow) or 6 with leading seconds"
	case n > 7:
		return fmt.Sprintf("%s, found %d: is this a whole crontab line? The schedule is its first 5 fields; the command goes in `command:`", want, n)
	}
	return fmt.Sprintf("%s, found %d", want, n)
}

// yearHint explains a 6-field expression whose last field fails as a day of
// week but reads as a year: the author counted minute-first with a year.
func yearHint(fields []string) string {
	last := fields[len(fields)-1]
	if len(fields) != 6 || len(last) != 4 || strings.Trim(last, "0123456789") != "" || last < "1970" {
		return ""
	}
	return fmt.Sprintf("6 fields read as SECONDS MIN HOUR DOM MON DOW; %q looks like a year: a year field is not supported", last)
}

// bad builds a Parse error naming the expression.
func bad(expr, format string, args ...any) error {
	return fmt.Errorf("%w %q: %s", ErrBadSchedule, expr, fmt.Sprintf(format, args...))
}
