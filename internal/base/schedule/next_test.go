package schedule

import (
	"testing"
	"time"
	_ "time/tzdata" // the same zone rules on every test machine
)

// nextCase expects the next len(want) fires after from, each written as an
// RFC 3339 literal whose offset is also checked.
type nextCase struct {
	name string
	expr string
	zone string
	from string
	want []string
}

func runNextCases(t *testing.T, cases []nextCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.expr, mustZone(t, tc.zone))
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.expr, err)
			}
			got := NextN(s, mustTime(t, tc.from), len(tc.want))
			if len(got) != len(tc.want) {
				t.Fatalf("%q from %s: got %d fires %v, want %v", tc.expr, tc.from, len(got), got, tc.want)
			}
			for i, w := range tc.want {
				assertInstant(t, got[i], mustTime(t, w))
			}
		})
	}
}

func TestNextNewYork(t *testing.T) {
	const z = "America/New_York" // 2026-03-08 02:00 EST -> 03:00 EDT; 2026-11-01 02:00 EDT -> 01:00 EST
	runNextCases(t, []nextCase{
		{"daily 02:30 runs once at the spring jump", "30 2 * * *", z, "2026-03-07T12:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"daily 02:00 from a second before the gap", "0 2 * * *", z, "2026-03-08T01:59:59-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:00:00-04:00"}},
		{"fixed times in and after the gap each run at the jump", "0,30 2,3 * * *", z, "2026-03-08T01:30:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-08T03:00:00.000000001-04:00", "2026-03-08T03:00:00.000000002-04:00",
				"2026-03-08T03:30:00-04:00", "2026-03-09T02:00:00-04:00"}},
		{"every minute skips the gap", "* * * * *", z, "2026-03-08T01:58:00-05:00",
			[]string{"2026-03-08T01:59:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T03:01:00-04:00"}},
		{"every 15 minutes skips the gap", "*/15 * * * *", z, "2026-03-08T01:40:00-05:00",
			[]string{"2026-03-08T01:45:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T03:15:00-04:00"}},
		{"hourly skips 02:00", "0 * * * *", z, "2026-03-08T00:30:00-05:00",
			[]string{"2026-03-08T01:00:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T04:00:00-04:00"}},
		{"hourly at half past skips 02:30", "30 * * * *", z, "2026-03-08T01:00:00-05:00",
			[]string{"2026-03-08T01:30:00-05:00", "2026-03-08T03:30:00-04:00"}},
		{"daily 01:30 on fall-back day fires once", "30 1 * * *", z, "2026-10-31T12:00:00-04:00",
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{"daily 01:30 from inside the second pass", "30 1 * * *", z, "2026-11-01T01:10:00-05:00",
			[]string{"2026-11-02T01:30:00-05:00"}},
		{"daily 01:30 from after the first pass", "30 1 * * *", z, "2026-11-01T01:45:00-04:00",
			[]string{"2026-11-02T01:30:00-05:00"}},
		{"daily 01:00 at the fold's start", "0 1 * * *", z, "2026-11-01T00:30:00-04:00",
			[]string{"2026-11-01T01:00:00-04:00", "2026-11-02T01:00:00-05:00"}},
		{"every 15 minutes fires in both passes", "*/15 * * * *", z, "2026-11-01T01:40:00-04:00",
			[]string{"2026-11-01T01:45:00-04:00", "2026-11-01T01:00:00-05:00", "2026-11-01T01:15:00-05:00"}},
		{"hourly fires in both passes", "0 * * * *", z, "2026-11-01T00:30:00-04:00",
			[]string{"2026-11-01T01:00:00-04:00", "2026-11-01T01:00:00-05:00", "2026-11-01T02:00:00-05:00"}},
		{"midnight is untouched", "@daily", z, "2026-11-01T00:00:00-04:00",
			[]string{"2026-11-02T00:00:00-05:00"}},
		{"6-field fixed time in the gap", "0 30 2 * * *", z, "2026-03-08T00:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00"}},
	})
}

func TestNextLondon(t *testing.T) {
	const z = "Europe/London" // 2026-03-29 01:00 GMT -> 02:00 BST; 2026-10-25 02:00 BST -> 01:00 GMT
	runNextCases(t, []nextCase{
		{"daily 01:30 runs once at the spring jump", "30 1 * * *", z, "2026-03-28T12:00:00Z",
			[]string{"2026-03-29T02:00:00+01:00", "2026-03-30T01:30:00+01:00"}},
		{"daily 01:30 on fall-back day fires once", "30 1 * * *", z, "2026-10-24T12:00:00+01:00",
			[]string{"2026-10-25T01:30:00+01:00", "2026-10-26T01:30:00Z"}},
		{"every 30 minutes fires in both passes", "*/30 * * * *", z, "2026-10-25T01:20:00+01:00",
			[]string{"2026-10-25T01:30:00+01:00", "2026-10-25T01:00:00Z", "2026-10-25T01:30:00Z", "2026-10-25T02:00:00Z"}},
	})
}

func TestNextLordHowe(t *testing.T) {
	const z = "Australia/Lord_Howe" // 2026-04-05 02:00 +11 -> 01:30 +10:30; 2026-10-04 02:00 +10:30 -> 02:30 +11
	runNextCases(t, []nextCase{
		{"daily 02:15 runs at the half-hour jump", "15 2 * * *", z, "2026-10-03T12:00:00+10:30",
			[]string{"2026-10-04T02:30:00+11:00", "2026-10-05T02:15:00+11:00"}},
		{"daily 02:30 just after the gap is normal", "30 2 * * *", z, "2026-10-03T12:00:00+10:30",
			[]string{"2026-10-04T02:30:00+11:00", "2026-10-05T02:30:00+11:00"}},
		{"every 15 minutes skips the gap", "*/15 * * * *", z, "2026-10-04T01:40:00+10:30",
			[]string{"2026-10-04T01:45:00+10:30", "2026-10-04T02:30:00+11:00", "2026-10-04T02:45:00+11:00"}},
		{"daily 01:45 on fall-back day fires once", "45 1 * * *", z, "2026-04-04T12:00:00+11:00",
			[]string{"2026-04-05T01:45:00+11:00", "2026-04-06T01:45:00+10:30"}},
		{"every 15 minutes fires in both passes", "*/15 * * * *", z, "2026-04-05T01:40:00+11:00",
			[]string{"2026-04-05T01:45:00+11:00", "2026-04-05T01:30:00+10:30", "2026-04-05T01:45:00+10:30", "2026-04-05T02:00:00+10:30"}},
		{"hourly is 90 real minutes apart across the fold", "0 * * * *", z, "2026-04-05T00:30:00+11:00",
			[]string{"2026-04-05T01:00:00+11:00", "2026-04-05T02:00:00+10:30", "2026-04-05T03:00:00+10:30"}},
		{"daily 02:00 on fall-back day exists once only", "0 2 * * *", z, "2026-04-04T12:00:00+11:00",
			[]string{"2026-04-05T02:00:00+10:30", "2026-04-06T02:00:00+10:30"}},
	})
}

func TestNextShanghai(t *testing.T) {
	const z = "Asia/Shanghai" // no DST
	runNextCases(t, []nextCase{
		{"daily 02:30 on New York's spring day", "30 2 * * *", z, "2026-03-08T00:00:00+08:00",
			[]string{"2026-03-08T02:30:00+08:00", "2026-03-09T02:30:00+08:00"}},
		{"midnight from a second before", "0 0 * * *", z, "2026-03-08T23:59:59+08:00",
			[]string{"2026-03-09T00:00:00+08:00"}},
		{"every 15 minutes on London's fall day", "*/15 * * * *", z, "2026-10-25T08:50:00+08:00",
			[]string{"2026-10-25T09:00:00+08:00", "2026-10-25T09:15:00+08:00"}},
	})
}

func TestNextEvery(t *testing.T) {
	runNextCases(t, []nextCase{
		{"1m from half a minute", "@every 1m", "UTC", "2026-01-01T10:00:30Z",
			[]string{"2026-01-01T10:01:00Z", "2026-01-01T10:02:00Z"}},
		// 2026-01-01T00:00:00Z is Unix 1767225600 = 7 * 252460800, a slot.
		{"7s epoch aligned", "@every 7s", "UTC", "2026-01-01T00:00:03Z",
			[]string{"2026-01-01T00:00:07Z", "2026-01-01T00:00:14Z"}},
		{"7s from an exact slot", "@every 7s", "UTC", "2026-01-01T00:00:07Z",
			[]string{"2026-01-01T00:00:14Z"}},
		// A day is 16 * 5400 s, so every UTC midnight is a 90m slot.
		{"90m from a slot", "@every 90m", "UTC", "2026-01-01T00:00:00Z",
			[]string{"2026-01-01T01:30:00Z", "2026-01-01T03:00:00Z"}},
		{"1h in a half-hour zone keeps UTC slots", "@every 1h", "Asia/Kolkata", "2026-01-01T10:00:00+05:30",
			[]string{"2026-01-01T10:30:00+05:30", "2026-01-01T11:30:00+05:30"}},
		{"1h across the spring jump is real hours", "@every 1h", "America/New_York", "2026-03-08T01:30:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-08T04:00:00-04:00"}},
		{"1s from a fraction", "@every 1s", "UTC", "2026-01-01T10:00:00.5Z",
			[]string{"2026-01-01T10:00:01Z"}},
		{"before the epoch", "@every 1h", "UTC", "1969-12-31T22:30:00Z",
			[]string{"1969-12-31T23:00:00Z", "1970-01-01T00:00:00Z"}},
	})
}

func TestNextFieldsAndDescriptors(t *testing.T) {
	const from = "2026-01-15T10:20:00Z" // a Thursday
	runNextCases(t, []nextCase{
		{"6 fields with seconds", "30 0 12 * * *", "UTC", from, []string{"2026-01-15T12:00:30Z"}},
		{"6 fields every 10 seconds", "*/10 * * * * *", "UTC", "2026-01-01T10:00:05Z",
			[]string{"2026-01-01T10:00:10Z", "2026-01-01T10:00:20Z"}},
		{"fraction of a second", "* * * * * *", "UTC", "2026-01-01T10:00:05.999Z", []string{"2026-01-01T10:00:06Z"}},
		{"@yearly", "@yearly", "UTC", from, []string{"2027-01-01T00:00:00Z"}},
		{"@annually", "@annually", "UTC", from, []string{"2027-01-01T00:00:00Z"}},
		{"@monthly", "@monthly", "UTC", from, []string{"2026-02-01T00:00:00Z"}},
		{"@weekly is Sunday", "@weekly", "UTC", from, []string{"2026-01-18T00:00:00Z"}},
		{"@daily", "@daily", "UTC", from, []string{"2026-01-16T00:00:00Z"}},
		{"@midnight", "@midnight", "UTC", from, []string{"2026-01-16T00:00:00Z"}},
		{"@hourly", "@hourly", "UTC", from, []string{"2026-01-15T11:00:00Z"}},
		{"weekday names", "0 9 * * mon-fri", "UTC", "2026-01-16T10:00:00Z", // Friday
			[]string{"2026-01-19T09:00:00Z", "2026-01-20T09:00:00Z"}},
		{"dom or dow when both restricted", "0 0 13 * 5", "UTC", "2026-01-01T00:00:00Z",
			[]string{"2026-01-02T00:00:00Z", "2026-01-09T00:00:00Z", "2026-01-13T00:00:00Z", "2026-01-16T00:00:00Z"}},
		{"29 February within 8 years", "0 0 29 2 *", "UTC", "2026-03-01T00:00:00Z", []string{"2028-02-29T00:00:00Z"}},
		{"29 February across 2100", "0 0 29 2 *", "UTC", "2097-03-01T00:00:00Z", []string{"2104-02-29T00:00:00Z"}},
		{"29 February on a Sunday, 40 years on", "0 0 29 2 */7", "UTC", "2088-03-01T00:00:00Z", []string{"2128-02-29T00:00:00Z"}},
		{"22 February on a Sunday, 11 years on", "0 0 22 2 */7", "America/Indiana/Indianapolis", "2071-03-01T00:00:00Z", []string{"2082-02-22T00:00:00-05:00"}},
		{"year end rollover", "59 23 31 12 *", "UTC", "2026-12-31T23:59:00Z", []string{"2027-12-31T23:59:00Z"}},
		{"CRON_TZ overrides loc", "CRON_TZ=Asia/Shanghai 0 9 * * *", "America/New_York", "2026-01-01T00:00:00Z",
			[]string{"2026-01-01T09:00:00+08:00"}},
		{"TZ overrides loc", "TZ=UTC 0 0 * * *", "Asia/Shanghai", "2026-01-01T12:00:00Z",
			[]string{"2026-01-02T00:00:00Z"}},
		{"CRON_TZ zone's DST applies", "CRON_TZ=America/New_York 30 2 * * *", "UTC", "2026-03-07T12:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00"}},
		{"CRON_TZ with a descriptor", "CRON_TZ=Asia/Tokyo @daily", "UTC", "2026-01-01T00:00:00Z",
			[]string{"2026-01-02T00:00:00+09:00"}},
	})
}

func TestNextNeverFires(t *testing.T) {
	for _, expr := range []string{"0 0 31 2 *", "0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 0 30 2 *"} {
		t.Run(expr, func(t *testing.T) {
			s, err := Parse(expr, time.UTC)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := s.Next(mustTime(t, "2026-01-01T00:00:00Z")); !got.IsZero() {
				t.Fatalf("Next = %s, want the zero time", got)
			}
		})
	}
}

func TestNextNilLocationIsLocal(t *testing.T) {
	s, err := Parse("0 0 * * *", nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got := s.Next(mustTime(t, "2026-01-01T00:00:00Z")).Location(); got != time.Local {
		t.Fatalf("location = %v, want Local", got)
	}
}

func BenchmarkNextNeverFires(b *testing.B) {
	s, err := Parse("0 0 31 2 *", time.UTC)
	if err != nil {
		b.Fatal(err)
	}
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		s.Next(from)
	}
}

func mustZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("LoadLocation(%q): %v", name, err)
	}
	return loc
}

func mustTime(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("time.Parse(%q): %v", s, err)
	}
	return v
}

// assertInstant checks the instant and the offset it is shown with.
func assertInstant(t testing.TB, got, want time.Time) {
	t.Helper()
	_, gotOff := got.Zone()
	_, wantOff := want.Zone()
	if !got.Equal(want) || gotOff != wantOff {
		t.Errorf("got %s, want %s", got.Format(time.RFC3339), want.Format(time.RFC3339))
	}
}

// BenchmarkNext is the scheduler's common case: the next fire of an
// ordinary schedule in a zone with DST, away from any change of offset.
func BenchmarkNext(b *testing.B) {
	for _, expr := range []string{"*/5 * * * *", "30 2 * * *", "0 9 * * mon-fri"} {
		b.Run(expr, func(b *testing.B) {
			s, err := Parse(expr, mustZone(b, "America/New_York"))
			if err != nil {
				b.Fatal(err)
			}
			from := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)
			for b.Loop() {
				s.Next(from)
			}
		})
	}
}
