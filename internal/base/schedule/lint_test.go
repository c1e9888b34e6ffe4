package schedule

import (
	"slices"
	"testing"
	"time"
)

func TestLint(t *testing.T) {
	const from = "2026-06-01T00:00:00Z"
	cases := []struct {
		name, expr, zone string
		want             []string
	}{
		{"fixed time in the gap", "30 2 * * *", "America/New_York",
			[]string{"02:30 does not exist on 2027-03-14 in America/New_York; runs at 03:00 instead"}},
		{"two fixed times in the gap", "0,30 2 * * *", "America/New_York",
			[]string{"02:00, 02:30 do not exist on 2027-03-14 in America/New_York; each runs at 03:00 instead, one after the other (as cron runs them)"}},
		{"fixed time in the fold", "30 1 * * *", "America/New_York",
			[]string{"01:30 occurs twice on 2026-11-01 in America/New_York; runs once, at 01:30 EDT (not again at 01:30 EST)"}},
		{"two fixed times in the fold", "0,30 1 * * *", "America/New_York",
			[]string{"01:00, 01:30 occur twice on 2026-11-01 in America/New_York; each runs once, in EDT (not again in EST)"}},
		{"many fixed times in the gap", "* 30 2 * * *", "America/New_York",
			[]string{"02:30, 02:30:01, 02:30:02, and 57 more do not exist on 2027-03-14 in America/New_York; each runs at 03:00 instead, one after the other (as cron runs them)"}},
		{"half-hour gap", "15 2 * * *", "Australia/Lord_Howe",
			[]string{"02:15 does not exist on 2026-10-04 in Australia/Lord_Howe; runs at 02:30 instead"}},
		{"half-hour fold", "45 1 * * *", "Australia/Lord_Howe",
			[]string{"01:45 occurs twice on 2027-04-04 in Australia/Lord_Howe; runs once, at 01:45 +11 (not again at 01:45 +1030)"}},
		{"CRON_TZ zone is the one checked", "CRON_TZ=Europe/London 30 1 * * *", "UTC",
			[]string{
				"01:30 occurs twice on 2026-10-25 in Europe/London; runs once, at 01:30 BST (not again at 01:30 GMT)",
				"01:30 does not exist on 2027-03-28 in Europe/London; runs at 02:00 instead",
			}},
		{"transition day not scheduled", "30 2 * * 1", "America/New_York", nil},
		{"wildcard job", "*/15 * * * *", "America/New_York", nil},
		{"hourly", "@hourly", "America/New_York", nil},
		{"no DST", "30 2 * * *", "Asia/Shanghai", nil},
		{"every", "@every 1h", "America/New_York", nil},
		{"never fires", "0 0 31 2 *", "UTC", []string{`"0 0 31 2 *" never fires: none of its months has the day of month it names`}},
		{"year reader's daily noon", "0 12 * * ? *", "UTC",
			[]string{`"0 12 * * ? *": 6 fields are read as SECONDS minutes hours dom month dow; if the last field was meant as a year, drop it (if not, "12 * * ? *" is the same schedule)`}},
		{"year reader's midnight on the 12th", "0 0 12 * * *", "UTC",
			[]string{`"0 0 12 * * *": 6 fields are read as SECONDS minutes hours dom month dow; if the last field was meant as a year, drop it (if not, "0 12 * * *" is the same schedule)`}},
		{"year warning keeps the prefix", "CRON_TZ=UTC 0 0 12 * * *", "UTC",
			[]string{`"CRON_TZ=UTC 0 0 12 * * *": 6 fields are read as SECONDS minutes hours dom month dow; if the last field was meant as a year, drop it (if not, "CRON_TZ=UTC 0 12 * * *" is the same schedule)`}},
		{"6 fields that cannot be minute-first", "0 30 2 * * *", "UTC", nil},
		{"6 fields with a weekday last", "0 0 12 * * 1-5", "UTC", nil},
		{"6 fields with real seconds", "30 0 12 * * *", "UTC", nil},
		{"5 fields", "0 12 * * *", "UTC", nil},
		{"unparsable", "61 * * * *", "UTC", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Lint(tc.expr, mustZone(t, tc.zone), mustTime(t, from))
			if !slices.Equal(got, tc.want) {
				t.Errorf("Lint(%q)\n got %q\nwant %q", tc.expr, got, tc.want)
			}
		})
	}
}

func TestMinInterval(t *testing.T) {
	cases := []struct {
		name, expr, zone, from string
		samples                int
		want                   time.Duration
	}{
		{"every 15 minutes", "*/15 * * * *", "UTC", "2026-01-01T00:00:00Z", 10, 15 * time.Minute},
		{"every 7 seconds", "@every 7s", "UTC", "2026-01-01T00:00:00Z", 5, 7 * time.Second},
		{"weekdays", "0 9 * * 1-5", "UTC", "2026-01-01T00:00:00Z", 10, 24 * time.Hour},
		{"irregular list", "0 0,1,5 * * *", "UTC", "2026-01-01T00:00:00Z", 6, time.Hour},
		{"gap moves a fixed time closer", "30 2,3 * * *", "America/New_York", "2026-03-07T12:00:00-05:00", 3, 30 * time.Minute},
		{"one sample", "*/15 * * * *", "UTC", "2026-01-01T00:00:00Z", 1, 0},
		{"no samples", "*/15 * * * *", "UTC", "2026-01-01T00:00:00Z", 0, 0},
		{"never fires", "0 0 31 2 *", "UTC", "2026-01-01T00:00:00Z", 5, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.expr, mustZone(t, tc.zone))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := MinInterval(s, mustTime(t, tc.from), tc.samples); got != tc.want {
				t.Errorf("MinInterval = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestNextNStops(t *testing.T) {
	cases := []struct {
		name, expr string
		n, want    int
	}{
		{"zero requested", "* * * * *", 0, 0},
		{"never fires", "0 0 30 2 *", 3, 0},
		{"as many as asked", "@every 1m", 4, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.expr, time.UTC)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := NextN(s, mustTime(t, "2026-01-01T00:00:00Z"), tc.n); len(got) != tc.want {
				t.Errorf("NextN returned %d fires %v, want %d", len(got), got, tc.want)
			}
		})
	}
}
