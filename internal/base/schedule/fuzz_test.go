package schedule

import (
	"testing"
	"time"
)

// FuzzParse feeds arbitrary expressions to Parse, Next and Lint: none may
// panic or hang, Next must move strictly forward, and the job's name may
// change what H and ~ draw but never whether the expression parses. Run it with
// `go test -fuzz FuzzParse ./internal/base/schedule`.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"* * * * *", "*/15 * * * *", "30 2 * * *", "30 1 * * *", "0 0 12 * * *", "0 12 * * ? *",
		"0 0 31 2 *", "0 0 29 2 *", "0 0 13 * 5", "0 9 * * mon-fri", ", * * * *", "61 * * * *",
		"@daily", "@hourly", "@every 7s", "@every 1h30m", "@every 0s", "@every 9223372036s", "@every",
		"CRON_TZ=America/New_York 30 2 * * *", "TZ=Australia/Lord_Howe 15 2 * * *", "CRON_TZ=UTC",
		"TZ=", "CRON_TZ=UTC TZ=UTC", "TZ=../../etc/passwd * * * * *", "* * * * * * *", "*/0 * * * *",
		"1-5/9223372036854775807 * * * *", "? ? ? ? ?", "* 30 2 * * *",
		"H H H H H", "H/9223372036854775807 * * * *", "H(0-59)/1 H(8-17) * * *", "H() * * * *",
		"~ ~ ~ ~ ~", "0~ ~0 * * mon~fri", "~/5 * * * *", "H~ * * * *", "0 0 H(29-31) 2 *",
	} {
		f.Add(seed)
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		f.Fatal(err)
	}
	froms := []time.Time{
		{},
		time.Date(2026, 3, 8, 1, 59, 59, 500, ny),
		time.Date(2026, 11, 1, 1, 30, 0, 0, ny),
		time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Unix(1<<62, 0),
		time.Unix(-1<<62, 0),
	}
	f.Fuzz(func(t *testing.T, expr string) {
		s, err := Parse(expr, ny)
		if _, named := ParseFor(expr, ny, "invoice"); (named == nil) != (err == nil) {
			t.Fatalf("%q: Parse says %v, ParseFor with a name %v", expr, err, named)
		}
		if err != nil {
			return
		}
		for _, from := range froms {
			if next := s.Next(from); !next.IsZero() && !next.After(from) {
				t.Fatalf("Parse(%q).Next(%s) = %s, not after", expr, from, next)
			}
		}
		Lint(expr, ny, froms[1])
		MinInterval(s, froms[2], 5)
	})
}
