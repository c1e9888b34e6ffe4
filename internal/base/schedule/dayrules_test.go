package schedule

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDayRulesHandChecked holds L, W and # to dates checked by hand
// against a calendar (GNU date's weekdays): leap years, a century that is
// not one, and months where 15W, 1W and 31W move to a Friday or Monday.
func TestDayRulesHandChecked(t *testing.T) {
	cases := []struct {
		expr, from, want string
	}{
		{"0 0 L * *", "2024-02-01", "2024-02-29"}, // leap year
		{"0 0 L * *", "2100-02-01", "2100-02-28"}, // 2100 is not one
		{"0 0 L * *", "2000-02-01", "2000-02-29"}, // 2000 is
		{"0 0 L * *", "1970-02-01", "1970-02-28"},
		{"0 0 L-2 * *", "2024-02-01", "2024-02-27"},
		{"0 0 * * 5L", "2026-12-01", "2026-12-25"},
		{"0 0 * * FRIL", "2026-02-01", "2026-02-27"},
		{"0 0 * * 5#3", "2026-12-01", "2026-12-18"},
		{"0 0 * * 5#3", "2026-01-01", "2026-01-16"},
		{"0 0 * * 5#5", "2025-12-01", "2026-01-30"},           // December 2025 has four Fridays
		{"0 0 15W * *", "2025-11-01", "2025-11-14"},           // the 15th a Saturday: the Friday before
		{"0 0 15W * *", "2025-06-01", "2025-06-16"},           // the 15th a Sunday: the Monday after
		{"0 0 1W * *", "2025-10-31T12:00:00", "2025-11-03"},   // the 1st a Saturday: the Monday after, not October
		{"0 0 31W * *", "2025-08-01", "2025-08-29"},           // the 31st a Sunday: the Friday before, not September
		{"0 0 LW * *", "2025-08-01", "2025-08-29"},            // the last day a Sunday
		{"0 0 31W * *", "2025-09-01", "2025-10-31"},           // September has no 31st
		{"0 0 L 2 *", "2099-03-01", "2100-02-28"},             // into a century that is not a leap year
		{"30 6 1,L * *", "2024-02-02", "2024-02-29T06:30:00"}, // a rule in a list
	}
	for _, c := range cases {
		s, err := Parse(c.expr, time.UTC)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		got := s.Next(day(t, c.from)).Format("2006-01-02T15:04:05")
		want := c.want
		if !strings.Contains(want, "T") {
			want += "T00:00:00"
		}
		if got != want {
			t.Errorf("next %q after %s = %s, want %s", c.expr, c.from, got, want)
		}
	}
}

// TestDayRulesAgreeWithACalendar walks every month of 1970-2100 and
// compares each rule's fires with the days a plain walk of the month's
// days picks by the rule's definition.
func TestDayRulesAgreeWithACalendar(t *testing.T) {
	rules := map[string]func(y int, mo time.Month) []int{
		"0 0 L * *":   func(y int, mo time.Month) []int { return []int{monthLen(y, mo)} },
		"0 0 L-3 * *": func(y int, mo time.Month) []int { return []int{monthLen(y, mo) - 3} },
		"0 0 LW * *":  func(y int, mo time.Month) []int { return []int{closestWeekday(y, mo, monthLen(y, mo))} },
		"0 0 15W * *": func(y int, mo time.Month) []int { return []int{closestWeekday(y, mo, 15)} },
		"0 0 1W * *":  func(y int, mo time.Month) []int { return []int{closestWeekday(y, mo, 1)} },
		"0 0 * * 5L":  func(y int, mo time.Month) []int { w := weekdaysOf(y, mo, time.Friday); return w[len(w)-1:] },
		"0 0 * * 0#2": func(y int, mo time.Month) []int { return weekdaysOf(y, mo, time.Sunday)[1:2] },
		"0 0 * * 5#3": func(y int, mo time.Month) []int { return weekdaysOf(y, mo, time.Friday)[2:3] },
		"0 0 * * 1#5": func(y int, mo time.Month) []int { return weekdaysOf(y, mo, time.Monday)[4:] },
	}
	for expr, days := range rules {
		s, err := Parse(expr, time.UTC)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		var want []time.Time
		for y := 1970; y <= 2100; y++ {
			for mo := time.January; mo <= time.December; mo++ {
				for _, d := range days(y, mo) {
					want = append(want, time.Date(y, mo, d, 0, 0, 0, 0, time.UTC))
				}
			}
		}
		at := time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)
		for i, w := range want {
			at = s.Next(at)
			if !at.Equal(w) {
				t.Fatalf("%s: fire %d is %s, the calendar says %s", expr, i, at, w)
			}
		}
	}
}

// TestDayRulesRefused: where a rule's reading would be a guess, the
// schedule is refused with a message that says why.
func TestDayRulesRefused(t *testing.T) {
	cases := map[string]string{
		"0 0 L * 5":      "need the other day field to be * or ?",
		"0 0 1 * 5#3":    "need the other day field to be * or ?",
		"0 0 * * L":      "L alone in the day of week is ambiguous",
		"0 0 1-5W * *":   "a rule takes one value",
		"0 0 32W * *":    "outside 1-31",
		"0 0 L-31 * *":   "outside 1-30",
		"0 0 * * 5#6":    "outside 1-5",
		"0 0 * * 8L":     "outside 0-7",
		"0 0 L/2 * *":    "takes one day, not a range or a step",
		"0 L * * *":      "a rule of the day fields, not of the hour",
		"0 0 * 5#1 *":    "a rule of the day fields, not of the month",
		"0 0 15W-20 * *": "takes one day, not a range or a step",
	}
	for expr, want := range cases {
		_, err := Parse(expr, time.UTC)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", expr, err, want)
		}
	}
}

func day(t *testing.T, s string) time.Time {
	t.Helper()
	layout := "2006-01-02"
	if strings.Contains(s, "T") {
		layout = "2006-01-02T15:04:05"
	}
	d, err := time.ParseInLocation(layout, s, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func monthLen(y int, mo time.Month) int {
	n := 0
	for d := time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC); d.Month() == mo; d = d.AddDate(0, 0, 1) {
		n++
	}
	return n
}

// closestWeekday is the weekday of the month nearest day n, by distance.
func closestWeekday(y int, mo time.Month, n int) int {
	best := 0
	for d := 1; d <= monthLen(y, mo); d++ {
		wd := time.Date(y, mo, d, 0, 0, 0, 0, time.UTC).Weekday()
		if wd == time.Saturday || wd == time.Sunday {
			continue
		}
		if best == 0 || abs(d-n) < abs(best-n) {
			best = d
		}
	}
	return best
}

func weekdaysOf(y int, mo time.Month, wd time.Weekday) []int {
	var out []int
	for d := 1; d <= monthLen(y, mo); d++ {
		if time.Date(y, mo, d, 0, 0, 0, 0, time.UTC).Weekday() == wd {
			out = append(out, d)
		}
	}
	return out
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// TestDayRulesDocExamples holds docs/schedules.md's table of calendar
// rules to the code: each example's expression fires on every date the
// row names, at midnight UTC.
func TestDayRulesDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/schedules.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "**Calendar rules**")
	if !ok {
		t.Fatal("docs/schedules.md has no **Calendar rules**")
	}
	_, table, _ = strings.Cut(table, "\n|")
	table, _, _ = strings.Cut(table, "\n\n")
	exprRe := regexp.MustCompile("`(0 0 [^`]+)`")
	dateRe := regexp.MustCompile(`\d{4}-\d{2}-\d{2}`)
	checked := 0
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 {
			continue
		}
		example := cells[4]
		m := exprRe.FindStringSubmatch(example)
		if m == nil {
			continue
		}
		s, err := Parse(m[1], time.UTC)
		if err != nil {
			t.Fatalf("%s: %v", m[1], err)
		}
		for _, d := range dateRe.FindAllString(example, -1) {
			want := day(t, d)
			if got := s.Next(want.Add(-time.Second)); !got.Equal(want) {
				t.Errorf("docs/schedules.md: %q fires %s after %s's eve, the row says %s", m[1], got, d, d)
			}
			checked++
		}
	}
	if checked < 8 {
		t.Fatalf("only %d example dates found in the table", checked)
	}
}

// TestEdgesNameWhatTheyMove: Berlin's spring forward of 2027-03-28
// (02:00 CET becomes 03:00 CEST) moves a fixed-time job's 02:30 to 03:00
// and drops a wildcard job's 02:xx fires; @every has no edges.
func TestEdgesNameWhatTheyMove(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2027, 3, 27, 12, 0, 0, 0, berlin)
	cases := map[string]string{
		"30 2 * * *":   "02:30 does not exist on 2027-03-28 in Europe/Berlin; runs at 03:00 instead",
		"*/30 * * * *": "02:00, 02:30 do not exist on 2027-03-28 in Europe/Berlin; 2 fire(s) of this wildcard job are skipped, the next runs at 03:00",
		"0 12 * * *":   "",
	}
	for expr, want := range cases {
		s, err := Parse(expr, berlin)
		if err != nil {
			t.Fatal(err)
		}
		edges := Edges(s, from, from.Add(24*time.Hour))
		if len(edges) != 1 || !edges[0].Forward || edges[0].Jump != time.Hour || edges[0].Effect != want {
			t.Errorf("Edges(%q) = %+v, want one forward edge of 1h with effect %q", expr, edges, want)
		}
	}
	every, _ := Parse("@every 1h", berlin)
	if e := Edges(every, from, from.Add(24*time.Hour)); e != nil {
		t.Errorf("Edges(@every) = %+v, want none", e)
	}
}
