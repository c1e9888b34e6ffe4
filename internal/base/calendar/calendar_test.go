package calendar

import (
	"strings"
	"testing"
	"time"
)

const holidaysICS = `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//cronvisor//test//EN
BEGIN:VEVENT
UID:xmas@test
DTSTART;VALUE=DATE:20201225
DTEND;VALUE=DATE:20201227
RRULE:FREQ=YEARLY
EXDATE;VALUE=DATE:20251225
SUMMARY:Christmas (two days)
END:VEVENT
BEGIN:VEVENT
UID:closure@test
DTSTART;VALUE=DATE:20270105
DTEND;VALUE=DATE:20270108
SUMMARY:Office closed
END:VEVENT
BEGIN:VEVENT
UID:maintenance@test
DTSTART;TZID=Europe/Berlin:20261230T220000
DTEND;TZID=Europe/Berlin:20261231T020000
SUMMARY:Maintenance window
END:VEVENT
END:VCALENDAR
`

func TestCalendarDays(t *testing.T) {
	c := New("holidays")
	if err := c.AddDate("2026-05-01"); err != nil {
		t.Fatal(err)
	}
	if err := c.AddICS(strings.NewReader(holidaysICS)); err != nil {
		t.Fatal(err)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	cases := map[string]bool{
		"2026-05-01": true, "2026-05-02": false, // listed
		"2026-12-25": true, "2026-12-26": true, "2026-12-27": false, // the yearly event, two days long
		"2025-12-25": false, "2025-12-26": false, // its EXDATE takes that occurrence away, both its days
		"2019-12-25": false, // before its DTSTART
		"2100-12-26": true,
		"2027-01-04": false, "2027-01-05": true, "2027-01-07": true, "2027-01-08": false, // [start, end)
		"2026-12-30": true, "2026-12-31": true, "2027-01-01": false, // a timed event over midnight: both dates
	}
	for day, want := range cases {
		d, _ := time.ParseInLocation(time.DateOnly, day, berlin)
		if got := c.Has(d.Add(9 * time.Hour)); got != want {
			t.Errorf("Has(%s) = %v, want %v", day, got, want)
		}
	}
}

func TestCalendarRefusesWhatItCannotRead(t *testing.T) {
	c := New("x")
	if err := c.AddDate("2026-13-01"); err == nil {
		t.Error("AddDate(2026-13-01) accepted")
	}
	bad := strings.Replace(holidaysICS, "RRULE:FREQ=YEARLY", "RRULE:FREQ=SOMETIMES", 1)
	if err := c.AddICS(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "event 1 (Christmas (two days)): RRULE") {
		t.Errorf("a bad RRULE: %v", err)
	}
	if err := c.AddICS(strings.NewReader("not a calendar")); err == nil {
		t.Error("a text that is no iCalendar was accepted")
	}
}
