package schedule

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// The tables below pin one rule of cron each, with the example that shows
// it; the reference comparison (TestNextAgainstCrond) covers the rest.

func TestDayRule(t *testing.T) {
	const from = "2026-01-01T00:00:00Z" // a Thursday
	runNextCases(t, []nextCase{
		{"a day-of-month step begins with * so both must match", "0 0 */2 * MON", "UTC", from,
			[]string{"2026-01-05T00:00:00Z", "2026-01-19T00:00:00Z", "2026-02-09T00:00:00Z", "2026-02-23T00:00:00Z", "2026-03-09T00:00:00Z"}},
		{"a list holding * is restricted, so either matches", "0 0 1,* * MON", "UTC", from,
			[]string{"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z"}},
		{"a full range written out is restricted", "0 0 1-31 * MON", "UTC", from,
			[]string{"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"}},
		{"both restricted: the 1st, the 15th and Mondays", "0 0 1,15 * MON", "UTC", from,
			[]string{"2026-01-05T00:00:00Z", "2026-01-12T00:00:00Z", "2026-01-15T00:00:00Z", "2026-01-19T00:00:00Z"}},
		{"day of week alone", "0 0 * * MON", "UTC", from,
			[]string{"2026-01-05T00:00:00Z", "2026-01-12T00:00:00Z"}},
		{"day of month alone", "0 0 13 * *", "UTC", from,
			[]string{"2026-01-13T00:00:00Z", "2026-02-13T00:00:00Z"}},
		{"a day-of-week step begins with * so both must match", "0 0 13 * */2", "UTC", from,
			[]string{"2026-01-13T00:00:00Z", "2026-06-13T00:00:00Z"}}, // a Tuesday, a Saturday
		{"? is *", "0 0 ?/2 * MON", "UTC", from,
			[]string{"2026-01-05T00:00:00Z", "2026-01-19T00:00:00Z"}},
		{"@weekly restricts only the day of week", "@weekly", "UTC", from,
			[]string{"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"}},
		{"@monthly restricts only the day of month", "@monthly", "UTC", from,
			[]string{"2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"}},
	})
}

func TestSundayAndNames(t *testing.T) {
	from := "2026-03-01T12:00:00Z" // a Sunday, after the fire
	runNextCases(t, []nextCase{
		{"1-7/2 is Monday, Wednesday, Friday, Sunday", "0 9 * * 1-7/2", "UTC", from,
			[]string{"2026-03-02T09:00:00Z", "2026-03-04T09:00:00Z", "2026-03-06T09:00:00Z", "2026-03-08T09:00:00Z"}},
		{"0-7/2 is Sunday, Tuesday, Thursday, Saturday", "0 9 * * 0-7/2", "UTC", from,
			[]string{"2026-03-03T09:00:00Z", "2026-03-05T09:00:00Z", "2026-03-07T09:00:00Z", "2026-03-08T09:00:00Z"}},
		{"5-7/1 is Friday to Sunday", "0 9 * * 5-7/1", "UTC", from,
			[]string{"2026-03-06T09:00:00Z", "2026-03-07T09:00:00Z", "2026-03-08T09:00:00Z", "2026-03-13T09:00:00Z"}},
		{"SAT-SUN ends on Sunday", "0 9 * * SAT-SUN", "UTC", from,
			[]string{"2026-03-07T09:00:00Z", "2026-03-08T09:00:00Z", "2026-03-14T09:00:00Z"}},
		{"5-0 ends on Sunday", "0 9 * * 5-0", "UTC", from,
			[]string{"2026-03-06T09:00:00Z", "2026-03-07T09:00:00Z", "2026-03-08T09:00:00Z", "2026-03-13T09:00:00Z"}},
		{"7 alone is Sunday", "0 9 * * 7", "UTC", from, []string{"2026-03-08T09:00:00Z"}},
		{"names in any case", "0 9 * * mOn-FrI", "UTC", from,
			[]string{"2026-03-02T09:00:00Z", "2026-03-03T09:00:00Z"}},
		{"month names and ranges", "0 0 1 jul-AUG *", "UTC", from,
			[]string{"2026-07-01T00:00:00Z", "2026-08-01T00:00:00Z", "2027-07-01T00:00:00Z"}},
		{"month name with a step", "0 0 1 jan-dec/6 *", "UTC", from,
			[]string{"2026-07-01T00:00:00Z", "2027-01-01T00:00:00Z"}},
	})
}

func TestSpringForwardGap(t *testing.T) {
	runNextCases(t, []nextCase{
		// 2026-03-08 02:00 EST -> 03:00 EDT
		{"two fixed times in the gap both run at the jump", "0,30 2 * * *", "America/New_York", "2026-03-08T00:00:00Z",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-08T03:00:00.000000001-04:00", "2026-03-09T02:00:00-04:00"}},
		{"a fixed-time range is fixed: each minute runs at the jump", "0-59 2 * * *", "America/New_York", "2026-03-08T06:00:00Z",
			[]string{"2026-03-08T03:00:00-04:00"}},
		{"a wildcard minute in the gap hour does not run", "* 2 * * *", "America/New_York", "2026-03-08T06:00:00Z",
			[]string{"2026-03-09T02:00:00-04:00"}},
		{"a * inside a list does not make a wildcard job", "5,*/20 2,3 * * *", "America/New_York", "2026-03-08T06:00:00Z",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-08T03:00:00.000000001-04:00", "2026-03-08T03:00:00.000000002-04:00",
				"2026-03-08T03:00:00.000000003-04:00", "2026-03-08T03:00:00.000000004-04:00", "2026-03-08T03:05:00-04:00"}},
		{"a wildcard job runs only the wall times that exist", "*/20 2,3 * * *", "America/New_York", "2026-03-08T06:00:00Z",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-08T03:20:00-04:00"}},
		// 2026-10-04 02:00 +10:30 -> 02:30 +11 on Lord Howe
		{"half-hour gap: both fixed times at the jump", "0,15 2 * * *", "Australia/Lord_Howe", "2026-10-03T12:00:00Z",
			[]string{"2026-10-04T02:30:00+11:00", "2026-10-04T02:30:00.000000001+11:00", "2026-10-05T02:00:00+11:00"}},
		// Chatham: 2026-09-27 02:45 +12:45 -> 03:45 +13:45
		{"Chatham's gap", "0 3 * * *", "Pacific/Chatham", "2026-09-26T00:00:00Z",
			[]string{"2026-09-27T03:45:00+13:45", "2026-09-28T03:00:00+13:45"}},
	})
	// All sixty minutes of 02:xx run, in order, right at the jump.
	s, err := Parse("0-59 2 * * *", mustZone(t, "America/New_York"))
	if err != nil {
		t.Fatal(err)
	}
	fires := NextN(s, mustTime(t, "2026-03-08T06:00:00Z"), 61)
	jump := mustTime(t, "2026-03-08T07:00:00Z")
	for i, f := range fires[:60] {
		if want := jump.Add(time.Duration(i)); !f.Equal(want) {
			t.Fatalf("gap fire %d at %s, want %s", i, f.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
		}
	}
	if want := mustTime(t, "2026-03-09T02:00:00-04:00"); !fires[60].Equal(want) {
		t.Fatalf("after the gap: %s, want %s", fires[60], want)
	}
}

func TestFallBackFold(t *testing.T) {
	runNextCases(t, []nextCase{
		// 2026-11-01 02:00 EDT -> 01:00 EST
		{"a fixed time runs in the first pass only", "30 1 * * *", "America/New_York", "2026-11-01T04:00:00Z",
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{"a fixed-time hour range is fixed too", "30 0-23 * * *", "America/New_York", "2026-11-01T04:00:00Z",
			[]string{"2026-11-01T00:30:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-01T02:30:00-05:00"}},
		{"a wildcard job runs in both passes", "*/30 1 * * *", "America/New_York", "2026-11-01T05:00:00Z",
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-01T01:00:00-05:00", "2026-11-01T01:30:00-05:00"}},
		// Dublin's winter time is negative DST: GMT in winter, IST (+1) in summer.
		{"Dublin's fold is an ordinary fold", "30 1 * * *", "Europe/Dublin", "2026-10-24T12:00:00Z",
			[]string{"2026-10-25T01:30:00+01:00", "2026-10-26T01:30:00Z"}},
		{"Dublin's gap is an ordinary gap", "30 1 * * *", "Europe/Dublin", "2026-03-28T12:00:00Z",
			[]string{"2026-03-29T02:00:00+01:00", "2026-03-30T01:30:00+01:00"}},
		// Santiago: 2026-04-05 00:00 -03 -> 23:00 -04 the day before
		{"Santiago's fold at midnight", "30 23 * * *", "America/Santiago", "2026-04-04T12:00:00Z",
			[]string{"2026-04-04T23:30:00-03:00", "2026-04-05T23:30:00-04:00"}},
	})
}

// TestLeapYearEnds: Go's rule extension can report a zone period that ends
// on 31 December before the instant asked about (the end of a leap year);
// schedules must go on through it in both zone databases.
func TestLeapYearEnds(t *testing.T) {
	for _, db := range zoneDBs(t) {
		for _, zone := range []string{"Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Pacific/Chatham", "America/Santiago"} {
			loc := mustLoad(t, db, zone)
			for year := 2028; year <= 2096; year += 4 {
				t.Run(fmt.Sprintf("%s/%s/%d", db.name, zone, year), func(t *testing.T) {
					s, err := Parse("*/5 * * * *", loc)
					if err != nil {
						t.Fatal(err)
					}
					from := time.Date(year, 12, 30, 23, 58, 0, 0, time.UTC)
					fires := NextN(s, from, 300)
					if len(fires) != 300 {
						t.Fatalf("%d fires after %s, want 300", len(fires), from)
					}
					for i, f := range fires {
						want := from.Add(2*time.Minute + time.Duration(i)*5*time.Minute)
						if offsetAt(loc, want)%300 != 0 { // Chatham: fives fall on other instants
							break
						}
						if !f.Equal(want) {
							t.Fatalf("fire %d at %s, want %s", i, f, want)
						}
					}
				})
			}
		}
	}
	// The reproducer of the report, as `cronvisor next` runs it.
	for _, db := range zoneDBs(t) {
		s, err := Parse("*/5 * * * *", mustLoad(t, db, "Europe/Berlin"))
		if err != nil {
			t.Fatal(err)
		}
		got := NextN(s, mustTime(t, "2028-12-30T23:58:00Z"), 5)
		want := []string{"2028-12-31T01:00:00+01:00", "2028-12-31T01:05:00+01:00", "2028-12-31T01:10:00+01:00",
			"2028-12-31T01:15:00+01:00", "2028-12-31T01:20:00+01:00"}
		if len(got) != len(want) {
			t.Fatalf("%s database: %d fires %v, want %v", db.name, len(got), got, want)
		}
		for i := range want {
			assertInstant(t, got[i], mustTime(t, want[i]))
		}
		// And across the new year itself, where the bad period end lies.
		fires := NextN(s, mustTime(t, "2028-12-31T22:50:00Z"), 5)
		if len(fires) != 5 || !fires[0].Equal(mustTime(t, "2028-12-31T22:55:00Z")) {
			t.Fatalf("%s database: across the new year: %v", db.name, fires)
		}
	}
}

func TestSyntaxErrorsTeach(t *testing.T) {
	cases := []struct {
		name, expr, want string // want: the message after `bad schedule "EXPR": `
	}{
		{"star with a range", "*-5 * * * *", "minute: \"*-5\": `*` stands alone or takes a step (`*/2`), never a range"},
		{"question mark with a range", "?-5 * * * *", "minute: \"?-5\": `?` stands alone or takes a step (`?/2`), never a range"},
		{"minute above its range", "61 * * * *", "minute: 61 is above 59"},
		{"hour above its range", "0 24 * * *", "hour: 24 is above 23"},
		{"month zero", "0 0 1 0 *", "month: 0 is below 1"},
		{"weekday 8", "0 0 * * 8", "day-of-week: 8 is above 7"},
		{"backwards range", "5-1 * * * *", `minute: range "5-1" runs backwards (5 is above 1): cron would read it as no value and never run; write it as two ranges (5-59,0-1)`},
		{"a step on a range ending in Sunday as 0", "0 0 * * 5-0/2", `day-of-week: "5-0/2": cron reads a range that ends on Sunday as 0 with a step as no day at all; write 5-7/2`},
		{"a value with a step", "5/10 * * * *", "minute: \"5/10\": a step needs a range (`5-59/10` or `*/10`); cron rejects `N/STEP`"},
		{"upper-case descriptor", "@Hourly", "descriptors are lower case, as in cron: @hourly"},
		{"L with a step", "0 0 L/2 * *", `day-of-month: "L/2": L (last day) takes one day, not a range or a step (L, L-3, LW, 15W in the day of month; 5L, 5#3 in the day of week)`},
		{"5L beside a day of month", "0 0 1 * 5L", `L, W and # need the other day field to be * or ?: with both restricted cron runs on either day, which is rarely what such a rule means`},
		{"W in a range", "0 0 1W-5 * *", `day-of-month: "1W-5": W (nearest weekday) takes one day, not a range or a step (L, L-3, LW, 15W in the day of month; 5L, 5#3 in the day of week)`},
		{"# in the month", "0 0 * 1#2 *", `month: "1#2": # (the nth weekday of the month) is a rule of the day fields, not of the month`},
		{"H without its range", "H() * * * *", `minute: "H()": H takes a range in parentheses, H(a-b)`},
		{"H with an open parenthesis", "H(0-29 * * * *", `minute: "H(0-29": H takes a range in parentheses, H(a-b)`},
		{"H with a value", "H5 * * * *", `minute: "H5": H is followed by nothing, a range H(a-b) or a step H/n`},
		{"H with a step of 0", "H/0 * * * *", `minute: step 0 in "H/0": a step must be at least 1`},
		{"H with a range out of bounds", "0 H(0-24) * * *", `hour: 24 is above 23`},
		{"H with a backwards range", "H(30-10) * * * *", `minute: "H(30-10)": the range runs backwards (30 is above 10)`},
		{"tilde with a step", "0~30/5 * * * *", `minute: "0~30/5": ~ takes no step or range, as in cronie (a~b, ~b, a~ or ~); for a drawn start with a step write H/n or H(a-b)/n`},
		{"tilde out of bounds", "0~60 * * * *", `minute: 60 is above 59`},
		{"tilde backwards", "30~10 * * * *", `minute: "30~10": the range runs backwards (30 is above 10)`},
		{"full day name", "0 0 * * Monday", `day-of-week: "Monday": names are three letters (Mon)`},
		{"full month name", "0 0 1 January *", `month: "January": names are three letters (Jan)`},
		{"unknown name", "0 0 * * Foo", `day-of-week: "Foo" is not a number or a name (sun mon tue wed thu fri sat)`},
		{"a name where none is allowed", "0 mon * * *", `hour: "mon" is not a number`},
		{"bad step", "*/x * * * *", `minute: step "x" in "*/x" is not a number`},
		{"reboot", "@reboot", "@reboot is not supported: cronvisor fires on schedules (run it from your service manager)"},
		{"year in a sixth field", "0 0 1 1 * 2030", `6 fields read as SECONDS MIN HOUR DOM MON DOW; "2030" looks like a year: a year field is not supported`},
		{"a whole crontab line", "0 2 * * * root /usr/bin/backup --all --verbose now please", "expected 5 fields (MIN HOUR DOM MON DOW) or 6 with leading SECONDS, found 11: is this a whole crontab line? The schedule is its first 5 fields; the command goes in `command:`"},
		{"descriptor with more", "@daily 5", "@daily takes nothing after it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.expr, time.UTC)
			if !errors.Is(err, ErrBadSchedule) {
				t.Fatalf("Parse(%q) error = %v, want one wrapping ErrBadSchedule", tc.expr, err)
			}
			if want := `bad schedule "` + tc.expr + `": ` + tc.want; err.Error() != want {
				t.Errorf("Parse(%q) error\n got %s\nwant %s", tc.expr, err, want)
			}
		})
	}
}

func TestDayRuleWarning(t *testing.T) {
	from := mustTime(t, "2026-06-01T00:00:00Z")
	warned := func(expr string) bool {
		for _, w := range Lint(expr, time.UTC, from) {
			if w == fmt.Sprintf("%q restricts both day fields: as in cron it runs when EITHER the day of month OR the day of week matches, "+
				"not only when both do (to require both, start the day-of-month field with `*`, as in `*/2`)", expr) {
				return true
			}
		}
		return false
	}
	for expr, want := range map[string]bool{
		"0 0 1,15 * MON": true, "0 0 1-31 * MON": true, "0 0 13 * 5": true,
		"0 0 */2 * MON": false, "0 0 * * MON": false, "0 0 13 * *": false, "@weekly": false,
	} {
		if got := warned(expr); got != want {
			t.Errorf("Lint(%q) warns about the day rule: %v, want %v", expr, got, want)
		}
	}
}
