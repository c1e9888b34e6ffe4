// Package calendar holds named sets of days (jobs.yaml's calendars:): the
// dates a file lists, and the events of an iCalendar file (RFC 5545), with
// their recurrences, so that a job can skip the slots on a holiday, or run
// only on the days of a calendar. A day is a civil date, read in the zone
// of the slot asked about.
package calendar

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/emersion/go-ical"
	"github.com/teambition/rrule-go"
)

// civil is a date without a zone.
type civil struct {
	y int
	m time.Month
	d int
}

func civilOf(t time.Time) civil {
	y, m, d := t.Date()
	return civil{y, m, d}
}

// midnight is c as midnight UTC, the form a recurrence of all-day events
// is evaluated in.
func (c civil) midnight() time.Time { return time.Date(c.y, c.m, c.d, 0, 0, 0, 0, time.UTC) }

// String is the date as jobs.yaml writes it: 2026-12-25.
func (c civil) String() string { return fmt.Sprintf("%04d-%02d-%02d", c.y, c.m, c.d) }

// recurring is an event that repeats: the days its occurrences start on
// (as midnight UTC) and how many days each covers.
type recurring struct {
	starts *rrule.Set
	days   int
}

// Calendar is a named set of days.
type Calendar struct {
	Name  string
	days  map[civil]bool
	rules []recurring
}

// New is an empty calendar called name.
func New(name string) *Calendar { return &Calendar{Name: name, days: map[civil]bool{}} }

// AddDate adds a date written as YYYY-MM-DD.
func (c *Calendar) AddDate(s string) error {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return fmt.Errorf("%q is not a date (YYYY-MM-DD)", s)
	}
	c.days[civilOf(t)] = true
	return nil
}

// Has reports whether t's date, in t's zone, is a day of the calendar.
func (c *Calendar) Has(t time.Time) bool {
	day := civilOf(t)
	if c.days[day] {
		return true
	}
	at := day.midnight()
	for _, r := range c.rules {
		if len(r.starts.Between(at.AddDate(0, 0, 1-r.days), at, true)) > 0 {
			return true
		}
	}
	return false
}

// Day is t's date as the calendar reads it, for messages: 2026-12-25.
func Day(t time.Time) string { return civilOf(t).String() }

// Size is how many days the calendar lists and how many recurring events
// it holds, for messages.
func (c *Calendar) Size() (days, recurring int) { return len(c.days), len(c.rules) }

// AddICS adds the days of every event of an iCalendar stream: each day an
// event covers (an all-day event from its start to its end, exclusive; a
// timed one each date it touches, in its own zone), and for an event with
// an RRULE every occurrence, less its EXDATEs.
func (c *Calendar) AddICS(r io.Reader) error {
	cal, err := ical.NewDecoder(r).Decode()
	if err != nil {
		return fmt.Errorf("not an iCalendar file: %w", err)
	}
	for i, ev := range cal.Events() {
		if err := c.addEvent(ev); err != nil {
			return fmt.Errorf("event %d (%s): %w", i+1, summary(ev), err)
		}
	}
	return nil
}

func summary(ev ical.Event) string {
	if p := ev.Props.Get(ical.PropSummary); p != nil && p.Value != "" {
		return p.Value
	}
	return "no summary"
}

func (c *Calendar) addEvent(ev ical.Event) error {
	start, err := ev.DateTimeStart(time.UTC)
	if err != nil || start.IsZero() {
		return fmt.Errorf("no DTSTART it can read: %v", err)
	}
	end, err := ev.DateTimeEnd(time.UTC)
	if err != nil {
		return fmt.Errorf("DTEND: %w", err)
	}
	first, days := coverage(ev, start, end)
	rule := ev.Props.Get(ical.PropRecurrenceRule)
	if rule == nil {
		for i := range days {
			c.days[civilOf(first.midnight().AddDate(0, 0, i))] = true
		}
		return nil
	}
	opt, err := rrule.StrToROption(rule.Value)
	if err != nil {
		return fmt.Errorf("RRULE %q: %w", rule.Value, err)
	}
	opt.Dtstart = first.midnight()
	rr, err := rrule.NewRRule(*opt)
	if err != nil {
		return fmt.Errorf("RRULE %q: %w", rule.Value, err)
	}
	set := &rrule.Set{}
	set.RRule(rr)
	for _, ex := range ev.Props.Values(ical.PropExceptionDates) {
		for _, v := range strings.Split(ex.Value, ",") {
			p := ical.NewProp(ical.PropExceptionDates)
			p.Value, p.Params = v, ex.Params
			t, err := p.DateTime(time.UTC)
			if err != nil {
				return fmt.Errorf("EXDATE %q: %w", v, err)
			}
			set.ExDate(civilOf(t).midnight())
		}
	}
	c.rules = append(c.rules, recurring{starts: set, days: days})
	return nil
}

// coverage is the first date an event covers and how many dates: an
// all-day event's [start, end); a timed one's dates from its start to
// its end, in its own zone, an end at midnight not counting.
func coverage(ev ical.Event, start, end time.Time) (civil, int) {
	first := civilOf(start)
	if p := ev.Props.Get(ical.PropDateTimeStart); p != nil && (p.ValueType() == ical.ValueDate || len(p.Value) == len("20060102")) {
		days := int(end.Sub(start).Hours()+12) / 24 // rounded: a span of all-day dates
		return first, max(days, 1)
	}
	if !end.After(start) {
		return first, 1
	}
	last := civilOf(end.Add(-time.Nanosecond).In(start.Location()))
	days := 1
	for d := first.midnight(); civilOf(d) != last && days < maxSpan; d = d.AddDate(0, 0, 1) {
		days++
	}
	return first, days
}

// maxSpan bounds the days one event covers.
const maxSpan = 366
