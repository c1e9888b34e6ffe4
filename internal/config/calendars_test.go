package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const christmasICS = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nBEGIN:VEVENT\r\nUID:x@t\r\n" +
	"DTSTART;VALUE=DATE:20201225\r\nRRULE:FREQ=YEARLY\r\nSUMMARY:Christmas\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"

// TestCalendarsDecode: a list of dates and an iCalendar file relative to
// jobs.yaml make calendars the jobs' skip_on and only_on name.
func TestCalendarsDecode(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "xmas.ics"), []byte(christmasICS), 0o600); err != nil {
		t.Fatal(err)
	}
	text := `calendars:
  holidays: {dates: [2026-05-01], file: xmas.ics}
  workdays: [2026-12-24]
jobs:
  - {name: a, schedule: "@daily", command: "true", timeout: 1m, skip_on: [holidays], only_on: workdays}
`
	cfg, ps := Parse(filepath.Join(dir, "jobs.yaml"), []byte(text))
	if cfg == nil {
		t.Fatalf("refused: %v", ps)
	}
	j := cfg.Jobs[0]
	if len(j.SkipOn) != 1 || j.SkipOn[0].Name != "holidays" || len(j.OnlyOn) != 1 || j.OnlyOn[0].Name != "workdays" {
		t.Fatalf("skip_on %v, only_on %v", j.SkipOn, j.OnlyOn)
	}
	for day, want := range map[string]bool{"2026-05-01": true, "2031-12-25": true, "2026-12-24": false} {
		d, _ := time.Parse(time.DateOnly, day)
		if got := j.SkipOn[0].Has(d); got != want {
			t.Errorf("holidays has %s: %v, want %v", day, got, want)
		}
	}
}

// TestCalendarsRefused: each mistake is named at its line and column.
func TestCalendarsRefused(t *testing.T) {
	job := `jobs:
  - {name: a, schedule: "@daily", command: "true", timeout: 1m, skip_on: [%s]}
`
	cases := map[string]string{
		"calendars: {h: [2026-02-30]}\n" + strings.Replace(job, "%s", "h", 1):                  `jobs.yaml:1:17: calendars.h: "2026-02-30" is not a date (YYYY-MM-DD)`,
		"calendars: {h: {file: nope.ics}}\n" + strings.Replace(job, "%s", "h", 1):              "jobs.yaml:1:23: calendars.h.file: open ",
		"calendars: {h: {dates: [2026-01-01], url: x}}\n" + strings.Replace(job, "%s", "h", 1): `jobs.yaml:1:38: unknown key "url"`,
		"calendars: {h: {}}\n" + strings.Replace(job, "%s", "h", 1):                            "jobs.yaml:1:16: calendars.h: give its dates, a file (an iCalendar .ics), or both",
		"calendars: {holidays: [2026-01-01]}\n" + strings.Replace(job, "%s", "holiday", 1):     `jobs.yaml:3:75: skip_on: calendar "holiday" is not declared under calendars:`,
		strings.Replace(job, "%s", "h", 1):                                                     `jobs.yaml:2:75: skip_on: calendar "h" is not declared under calendars:`,
	}
	for text, want := range cases {
		dir := t.TempDir()
		cfg, ps := Parse(filepath.Join(dir, "jobs.yaml"), []byte(text))
		got := ""
		for _, p := range Errors(ps) {
			got += p.String() + "\n"
		}
		if cfg != nil || !strings.Contains(got, want) {
			t.Errorf("%s\nproblems:\n%swant one containing %q", text, got, want)
		}
	}
}

// TestCalendarsDocExample loads the jobs.yaml of docs/schedules.md's
// calendars section (with an iCalendar file where it names one) and
// holds the page's reasons to what the jobs' calendars say.
func TestCalendarsDocExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/schedules.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "### Calendars: skip_on and only_on")
	_, block, ok := strings.Cut(section, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	if !ok || !strings.Contains(block, "skip_on") {
		t.Fatal("docs/schedules.md has no yaml block with skip_on in its calendars section")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "holidays.ics"), []byte(christmasICS), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, ps := Parse(filepath.Join(dir, "jobs.yaml"), []byte(block))
	if cfg == nil || len(Errors(ps)) > 0 {
		t.Fatalf("the page's jobs.yaml is refused: %v", ps)
	}
	holidays, monthClose := cfg.Calendars["holidays"], cfg.Calendars["month_close"]
	xmas, _ := time.Parse(time.DateOnly, "2026-12-25")
	eve, _ := time.Parse(time.DateOnly, "2026-12-24")
	closing, _ := time.Parse(time.DateOnly, "2026-12-30")
	if !holidays.Has(xmas) || !holidays.Has(eve) || holidays.Has(closing) || !monthClose.Has(closing) || monthClose.Has(xmas) {
		t.Errorf("the page's calendars: holidays has 12-25 %v, 12-24 %v, 12-30 %v; month_close has 12-30 %v, 12-25 %v",
			holidays.Has(xmas), holidays.Has(eve), holidays.Has(closing), monthClose.Has(closing), monthClose.Has(xmas))
	}
	if cfg.Jobs[0].SkipOn[0] != holidays || cfg.Jobs[1].OnlyOn[0] != monthClose {
		t.Errorf("the jobs do not name the page's calendars")
	}
}
