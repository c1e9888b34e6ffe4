package schedule

import (
	"errors"
	"testing"
	"time"
)

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, expr, want string // want: the whole message after `bad schedule "EXPR": `
	}{
		{"minute out of range", "61 * * * *", "minute: 61 is above 59"},
		{"empty", "  ", "empty expression"},
		{"too few fields", "* * * *", "expected 5 fields (MIN HOUR DOM MON DOW) or 6 with leading SECONDS, found 4"},
		{"year field", "0 0 12 * * ? 2027", "7 fields: a year field is not supported; use 5 fields (minute hour dom month dow) or 6 with leading seconds"},
		{"zero step", "*/0 * * * *", `minute: step 0 in "*/0": a step must be at least 1`},
		{"day of month zero", "0 0 0 * *", "day-of-month: 0 is below 1"},
		{"empty list", ", * * * *", `minute: empty list element in ","`},
		{"unknown descriptor", "@fortnightly", "unknown descriptor @fortnightly (known: @yearly @annually @monthly @weekly @daily @midnight @hourly @every)"},
		{"every without duration", "@every", "@every takes exactly one duration, e.g. @every 5m"},
		{"every with split duration", "@every 5 m", "@every takes exactly one duration, e.g. @every 5m"},
		{"every bad duration", "@every soon", `time: invalid duration "soon"`},
		{"every zero", "@every 0s", "@every 0s: the interval must be at least 1s"},
		{"every negative", "@every -5m", "@every -5m: the interval must be at least 1s"},
		{"every sub-second", "@every 500ms", "@every 500ms: the interval must be at least 1s"},
		{"every fractional seconds", "@every 1500ms", "@every 1500ms: the interval must be a whole number of seconds"},
		{"unknown zone", "CRON_TZ=Mars/Olympus 0 * * * *", `unknown time zone "Mars/Olympus"`},
		{"empty zone", "TZ= 0 * * * *", "empty time zone in prefix"},
		{"zone only", "CRON_TZ=UTC", "no schedule after the time zone prefix"},
		{"two zones", "CRON_TZ=UTC TZ=UTC * * * * *", "more than one time zone prefix"},
		{"two zones without space", "CRON_TZ=UTC TZ=UTC", "more than one time zone prefix"},
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

func TestParseAccepts(t *testing.T) {
	for _, expr := range []string{
		"* * * * *", " 0 0 * * * ", "0 9 * * mon-fri", "0 0 1 jan *", "0 0 ? * *",
		"*/5 1-10/3 * * *", "0 0 12 * * *", "@every 1h30m", "@every 1s",
		"CRON_TZ=Asia/Tokyo @daily", "TZ=UTC @every 5m", "CRON_TZ=Australia/Lord_Howe\t30 2 * * *",
	} {
		t.Run(expr, func(t *testing.T) {
			s, err := Parse(expr, time.UTC)
			if err != nil {
				t.Fatalf("Parse(%q): %v", expr, err)
			}
			from := mustTime(t, "2026-01-01T00:00:00Z")
			if next := s.Next(from); !next.After(from) {
				t.Errorf("Next = %s, want after %s", next, from)
			}
		})
	}
}

// TestFixedTime pins which jobs get fixed-time DST handling.
func TestFixedTime(t *testing.T) {
	cases := []struct {
		expr  string
		fixed bool
	}{
		{"30 2 * * *", true},
		{"0,30 2,3 * * *", true},
		{"0 9-17 * * *", true},
		{"0 30 2 * * *", true},
		{"* 30 2 * * *", true}, // seconds do not count
		{"@daily", true},
		{"@weekly", true},
		{"0 0-23 * * *", true}, // cron looks at the first character, not the set
		{"0-59 2 * * *", true},
		{"5,*/20 2 * * *", true},
		{"30 0-23 * * *", true},
		{"0 * * * *", false},
		{"*/15 * * * *", false},
		{"0 */2 * * *", false}, // written with *, as Vixie cron reads it
		{"* 2 * * *", false},
		{"0 ? * * *", false},
		{"@hourly", false},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			s, err := Parse(tc.expr, time.UTC)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			cs, ok := s.(*cronSchedule)
			if !ok {
				t.Fatalf("Parse returned %T, want *cronSchedule", s)
			}
			if cs.fixed != tc.fixed {
				t.Errorf("fixed = %v, want %v", cs.fixed, tc.fixed)
			}
		})
	}
}
