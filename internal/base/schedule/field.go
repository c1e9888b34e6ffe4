package schedule

import (
	"fmt"
	"strconv"
	"strings"
)

// fieldSpec describes one cron field: its name in messages, its range and
// the names it accepts (three letters, any case, as crontab(5) has them).
type fieldSpec struct {
	name     string
	min, max int
	names    []string // names[i] stands for min+i; nil if the field has none
	// drawMax is the top of the range H and a bare ~ draw from: 28 for the
	// day of month (as Jenkins has it, so the day exists in every month)
	// and 6 for the day of week (7 is Sunday again); else max.
	drawMax int
}

var (
	secondField = fieldSpec{name: "second", min: 0, max: 59, drawMax: 59}
	minuteField = fieldSpec{name: "minute", min: 0, max: 59, drawMax: 59}
	hourField   = fieldSpec{name: "hour", min: 0, max: 23, drawMax: 23}
	domField    = fieldSpec{name: "day-of-month", min: 1, max: 31, drawMax: 28}
	monthField  = fieldSpec{name: "month", min: 1, max: 12, drawMax: 12,
		names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}}
	// Day of week runs to 7 as in cron, where 7 is Sunday again; parseField
	// folds it into 0 once the field is read.
	dowField = fieldSpec{name: "day-of-week", min: 0, max: 7, drawMax: 6,
		names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}}
)

// parsedField is a field's value set (bit v set for value v) and whether
// its text begins with `*` (or `?`), which is what cron's day rule and its
// DST classes look at — not whether the set is full.
type parsedField struct {
	mask  uint64
	star  bool
	rules dayRules // the day fields' L, W and # (dayrules.go)
}

// parseField reads one field the way cronie's entry.c does: a comma list of
// `*`, `N` or `N-M`, each optionally followed by `/STEP`, and the drawn
// forms of Jenkins (`H`, see parseHashed) and cronie (`a~b`, see
// parseTilde), whose values come from seed. Anything else is an error that
// names the field and, for syntax of other schedulers (Quartz), says so.
func parseField(f fieldSpec, text, seed string) (parsedField, error) {
	p := parsedField{star: strings.HasPrefix(text, "*") || strings.HasPrefix(text, "?")}
	if text == "" {
		return p, fmt.Errorf("%s: empty field", f.name)
	}
	for _, elem := range strings.Split(text, ",") {
		if elem == "" {
			return p, fmt.Errorf("%s: empty list element in %q", f.name, text)
		}
		if rule, err := parseDayRule(f, elem, &p.rules); rule || err != nil {
			if err != nil {
				return p, fmt.Errorf("%s: %w", f.name, err)
			}
			continue
		}
		if hint := foreignSyntax(f, elem); hint != "" {
			return p, fmt.Errorf("%s: %s", f.name, hint)
		}
		bits, err := parseElement(f, elem, seed)
		if err != nil {
			return p, fmt.Errorf("%s: %w", f.name, err)
		}
		p.mask |= bits
	}
	if f.max == 7 && p.mask&(1<<7) != 0 {
		p.mask = p.mask&^(1<<7) | 1
	}
	return p, nil
}

// parseElement reads `*[/S]`, `N[/S]`, `N-M[/S]`, a hashed `H` form or a
// cronie `~` form into a bit set.
func parseElement(f fieldSpec, elem, seed string) (uint64, error) {
	switch {
	case strings.HasPrefix(elem, "H"):
		return parseHashed(f, elem, seed)
	case strings.Contains(elem, "~"):
		return parseTilde(f, elem, seed)
	}
	rng, stepText, hasStep := strings.Cut(elem, "/")
	step := 1
	if hasStep {
		n, err := parseStep(stepText, elem)
		if err != nil {
			return 0, err
		}
		step = n
	}
	lo, hi, err := parseRange(f, rng, elem, hasStep)
	if err != nil {
		return 0, err
	}
	if hasStep && !strings.ContainsAny(rng, "*?-") {
		return 0, fmt.Errorf("%q: a step needs a range (`%s-%d/%d` or `*/%d`); cron rejects `N/STEP`", elem, rng, f.max, step, step)
	}
	var bits uint64
	for v := lo; v <= hi; v += step {
		bits |= 1 << uint(v)
	}
	return bits, nil
}

// parseStep reads the number after a `/`.
func parseStep(stepText, elem string) (int, error) {
	n, err := strconv.Atoi(stepText)
	switch {
	case stepText == "" || err != nil || n < 0 || strings.TrimLeft(stepText, "0123456789") != "":
		return 0, fmt.Errorf("step %q in %q is not a number", stepText, elem)
	case n == 0:
		return 0, fmt.Errorf("step 0 in %q: a step must be at least 1", elem)
	}
	return n, nil
}

// parseRange reads `*`, `?`, `N` or `N-M` and checks both ends.
//
// cron accepts a range that runs backwards (`22-2`) and reads it as no
// value at all, so the job silently never runs; cronvisor rejects it
// instead. The one backwards range cron does mean is a day-of-week range
// that ends on Sunday written as 0 (`SAT-SUN`, `5-0`), which runs to the
// end of the week — but not with a step, where cron again reads no day.
func parseRange(f fieldSpec, rng, elem string, hasStep bool) (lo, hi int, err error) {
	if rng == "*" || rng == "?" {
		return f.min, f.max, nil
	}
	if strings.HasPrefix(rng, "*") || strings.HasPrefix(rng, "?") {
		return 0, 0, fmt.Errorf("%q: `%c` stands alone or takes a step (`%c/2`), never a range", elem, rng[0], rng[0])
	}
	from, to, isRange := strings.Cut(rng, "-")
	if lo, err = parseValue(f, from, elem); err != nil {
		return 0, 0, err
	}
	if !isRange {
		return lo, lo, nil
	}
	if hi, err = parseValue(f, to, elem); err != nil {
		return 0, 0, err
	}
	if f.max == 7 && hi == 0 && lo > 0 {
		if hasStep {
			return 0, 0, fmt.Errorf("%q: cron reads a range that ends on Sunday as 0 with a step as no day at all; write %d-7/%s", elem, lo, strings.SplitN(elem, "/", 2)[1])
		}
		hi = 7
	}
	if lo > hi {
		return 0, 0, fmt.Errorf("range %q runs backwards (%d is above %d): cron would read it as no value and never run; write it as two ranges (%d-%d,%d-%d)", rng, lo, hi, lo, f.max, f.min, hi)
	}
	return lo, hi, nil
}

// parseValue reads a number or one of the field's names and checks it
// against the field's range.
func parseValue(f fieldSpec, s, elem string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("missing number in %q", elem)
	}
	if i := nameIndex(f, s); i >= 0 {
		return f.min + i, nil
	}
	if strings.TrimLeft(s, "0123456789") != "" {
		if f.names != nil && len(s) > 3 && nameIndex(f, s[:3]) >= 0 {
			return 0, fmt.Errorf("%q: names are three letters (%s)", s, s[:3])
		}
		if f.names != nil {
			return 0, fmt.Errorf("%q is not a number or a name (%s)", s, strings.Join(f.names, " "))
		}
		return 0, fmt.Errorf("%q is not a number", s)
	}
	n, err := strconv.Atoi(s)
	switch {
	case err != nil || n > f.max:
		return 0, fmt.Errorf("%s is above %d", s, f.max)
	case n < f.min:
		return 0, fmt.Errorf("%s is below %d", s, f.min)
	}
	return n, nil
}

func nameIndex(f fieldSpec, s string) int {
	for i, n := range f.names {
		if strings.EqualFold(n, s) {
			return i
		}
	}
	return -1
}

// foreignSyntax names the scheduler a field's syntax comes from when cron
// has no such thing, so the error teaches instead of failing on a digit.
// The day fields' own rules (dayrules.go) are read before it: what it
// sees of L, W and # there is one in a range, a step or another field.
func foreignSyntax(f fieldSpec, text string) string {
	up := strings.ToUpper(text)
	if f.name == domField.name || f.name == dowField.name {
		up = withoutNames(f, up)
	}
	var rule string
	switch {
	case (f.name == domField.name || f.name == dowField.name) && strings.ContainsAny(up, "LW#"):
		rule = dayRuleName(up)
	case strings.Contains(up, "#"):
		rule = "# (the nth weekday of the month)"
	case up == "L" || strings.HasSuffix(up, "L") && !containsName(f, up) || strings.HasPrefix(up, "L-") || up == "LW":
		rule = "L (last day)"
	case strings.HasSuffix(up, "W") && !containsName(f, up):
		rule = "W (nearest weekday)"
	default:
		return ""
	}
	if f.name == domField.name || f.name == dowField.name {
		return fmt.Sprintf("%q: %s takes one day, not a range or a step (L, L-3, LW, 15W in the day of month; 5L, 5#3 in the day of week)", text, rule)
	}
	return fmt.Sprintf("%q: %s is a rule of the day fields, not of the %s", text, rule, f.name)
}

// withoutNames is up with the field's names taken out, so that the W of
// WED is not read as a rule.
func withoutNames(f fieldSpec, up string) string {
	for _, n := range f.names {
		up = strings.ReplaceAll(up, strings.ToUpper(n), "")
	}
	return up
}

// dayRuleName names the rule a day field's element holds.
func dayRuleName(up string) string {
	switch {
	case strings.Contains(up, "#"):
		return "# (the nth weekday of the month)"
	case strings.Contains(up, "L"):
		return "L (last day)"
	}
	return "W (nearest weekday)"
}

// containsName reports whether text holds one of the field's names, whose
// letters (juL, wed, ...) must not be taken for Quartz syntax.
func containsName(f fieldSpec, up string) bool {
	for _, n := range f.names {
		if strings.Contains(up, strings.ToUpper(n)) {
			return true
		}
	}
	return false
}
