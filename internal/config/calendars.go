package config

import (
	"os"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"cronvisor/internal/base/calendar"
)

// calendarName is what a calendar may be called: a word a job's skip_on
// and only_on can name.
var calendarName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// calendarKeys are a calendar's keys when it is a mapping.
var calendarKeys = []string{"dates", "file"}

// calendars decodes the top-level calendars: each name maps to a list of
// dates, or to {dates: [...], file: PATH.ics}, PATH relative to this file.
// The file is read now: a reload reads it again.
func (d *decoder) calendars(cfg *Config, n *yaml.Node) {
	rn := resolve(n)
	if isNull(rn) {
		return
	}
	if rn.Kind != yaml.MappingNode {
		d.errorf(n, "calendars: expected a mapping of names to dates or {dates, file}, found %s", describe(n))
		return
	}
	cfg.Calendars = map[string]*calendar.Calendar{}
	for _, e := range d.entries(rn, 0) {
		if !calendarName.MatchString(e.name) {
			d.errorf(e.key, "calendars: %q is not a name (letters, digits, _ . -)", e.name)
			continue
		}
		c := calendar.New(e.name)
		if resolve(e.val).Kind == yaml.SequenceNode {
			d.calendarDates(c, "calendars."+e.name, e.val)
		} else {
			d.calendarOf(c, e)
		}
		cfg.Calendars[e.name] = c
	}
	d.calendarsByName = cfg.Calendars
}

// calendarOf decodes a calendar written as {dates, file}.
func (d *decoder) calendarOf(c *calendar.Calendar, e entry) {
	f := make([]entry, len(calendarKeys))
	what := "calendars." + e.name
	d.keyed(e.val, what, calendarKeys, nil, f)
	dates, hasDates := lookup(calendarKeys, f, "dates")
	file, hasFile := lookup(calendarKeys, f, "file")
	if !hasDates && !hasFile {
		d.errorf(e.val, "%s: give its dates, a file (an iCalendar .ics), or both", what)
		return
	}
	if hasDates {
		d.calendarDates(c, what+".dates", dates.val)
	}
	if !hasFile {
		return
	}
	p, ok := d.text(what+".file", file.val)
	if !ok {
		return
	}
	fh, err := os.Open(d.abs(p))
	if err != nil {
		d.errorf(file.val, "%s.file: %v", what, err)
		return
	}
	defer fh.Close()
	if err := c.AddICS(fh); err != nil {
		d.errorf(file.val, "%s.file %s: %v", what, p, err)
	}
}

// calendarDates adds a list of YYYY-MM-DD dates.
func (d *decoder) calendarDates(c *calendar.Calendar, key string, n *yaml.Node) {
	for _, item := range d.stringList(key, n) {
		if err := c.AddDate(resolve(item).Value); err != nil {
			d.errorf(item, "%s: %v", key, err)
		}
	}
}

// calendarRefs decodes skip_on or only_on: calendar names (a list, or one
// name), each declared under calendars.
func (d *decoder) calendarRefs(key string, n *yaml.Node) []*calendar.Calendar {
	items := []*yaml.Node{n}
	if resolve(n).Kind == yaml.SequenceNode {
		items = d.stringList(key, n)
	}
	var out []*calendar.Calendar
	for _, item := range items {
		name, ok := d.text(key, item)
		if !ok {
			continue
		}
		c, declared := d.calendarsByName[name]
		if !declared {
			d.errorf(item, "%s: calendar %q is not declared under calendars:%s", key, name, suggest(name, keysOf(d.calendarsByName)))
			continue
		}
		out = append(out, c)
	}
	return out
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// CalendarSkip is why the job's calendars leave slot out, "" when they do
// not: a day of a skip_on calendar, or a day none of its only_on ones
// lists. The day is slot's date in the job's zone.
func (j Job) CalendarSkip(slot time.Time) string {
	if j.Location != nil {
		slot = slot.In(j.Location)
	}
	for _, c := range j.SkipOn {
		if c.Has(slot) {
			return "calendar " + c.Name + " (" + calendar.Day(slot) + ")"
		}
	}
	if len(j.OnlyOn) == 0 {
		return ""
	}
	names := make([]string, len(j.OnlyOn))
	for i, c := range j.OnlyOn {
		if c.Has(slot) {
			return ""
		}
		names[i] = c.Name
	}
	return "calendar " + strings.Join(names, ", ") + ": " + calendar.Day(slot) + " is not on it"
}
