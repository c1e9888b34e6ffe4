package schedule

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// randomField writes one cron field over [lo, hi] in one of the shapes
// people use: *, */k, a, a-b, a,b, a-b/k.
func randomField(r *rand.Rand, lo, hi int) string {
	a := lo + r.IntN(hi-lo+1)
	b := a + r.IntN(hi-a+1)
	k := 1 + r.IntN(5)
	switch r.IntN(6) {
	case 0:
		return "*"
	case 1:
		return fmt.Sprintf("*/%d", k)
	case 2:
		return fmt.Sprint(a)
	case 3:
		return fmt.Sprintf("%d-%d", a, b)
	case 4:
		return fmt.Sprintf("%d,%d", a, b)
	default:
		return fmt.Sprintf("%d-%d/%d", a, b, k)
	}
}

// randomExpr writes a random 5-field expression, or a 6-field one when
// withSeconds. Hours lean to 0-3, where the transitions are.
func randomExpr(r *rand.Rand, withSeconds bool) string {
	fields := []string{randomField(r, 0, 59), randomField(r, 0, 3+20*r.IntN(2)),
		randomField(r, 1, 31), randomField(r, 1, 12), randomField(r, 0, 6)}
	if withSeconds {
		fields = append([]string{randomField(r, 0, 59)}, fields...)
	}
	return strings.Join(fields, " ")
}

// TestNextProperties checks, for random expressions and instants, that
// Next moves strictly forward, is monotonic in t, never returns a fire
// twice, and returns a fire again when asked from just before it.
func TestNextProperties(t *testing.T) {
	zones := []string{"America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Shanghai", "UTC"}
	r := rand.New(rand.NewPCG(1, 2))
	base := mustTime(t, "2024-01-01T00:00:00Z")
	for i := range 300 {
		expr := randomExpr(r, i%3 == 0)
		zone := zones[i%len(zones)]
		t.Run(fmt.Sprintf("%s in %s", expr, zone), func(t *testing.T) {
			s, err := Parse(expr, mustZone(t, zone))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			t1 := base.Add(time.Duration(r.Int64N(int64(6 * 365 * 24 * time.Hour))))
			t2 := t1.Add(time.Duration(r.Int64N(int64(48 * time.Hour))))
			n1, n2 := s.Next(t1), s.Next(t2)
			if n1.IsZero() {
				return // an impossible date such as 31 February
			}
			if !n1.After(t1) || n1.After(n2) {
				t.Fatalf("Next(%s) = %s, Next(%s) = %s: not after t or not monotonic", t1, n1, t2, n2)
			}
			prev := t1
			for _, f := range NextN(s, t1, 40) {
				if !f.After(prev) {
					t.Fatalf("fire %s does not follow %s", f, prev)
				}
				if again := s.Next(f.Add(-time.Nanosecond)); !again.Equal(f) {
					t.Fatalf("Next(%s - 1ns) = %s, want the fire itself", f, again)
				}
				prev = f
			}
		})
	}
}

// TestNextAgainstBruteForce compares Next, around real DST transitions,
// with a reference that steps minute by minute through real instants and
// applies the Vixie rules directly.
func TestNextAgainstBruteForce(t *testing.T) {
	windows := []struct{ zone, from string }{
		{"America/New_York", "2026-03-07T20:00:00-05:00"},
		{"America/New_York", "2026-10-31T20:00:00-04:00"},
		{"Europe/London", "2026-03-28T20:00:00Z"},
		{"Australia/Lord_Howe", "2026-04-04T20:00:00+11:00"},
		{"Australia/Lord_Howe", "2026-10-03T20:00:00+10:30"},
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 60 {
		expr := randomExpr(r, false)
		if i%4 != 0 { // mostly every day, so the transition day is in play
			f := strings.Fields(expr)
			expr = strings.Join(append(f[:2], "*", "*", "*"), " ")
		}
		w := windows[i%len(windows)]
		t.Run(fmt.Sprintf("%s in %s", expr, w.zone), func(t *testing.T) {
			s, err := Parse(expr, mustZone(t, w.zone))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			from := mustTime(t, w.from)
			until := from.Add(30 * time.Hour)
			want := bruteForce(s.(*cronSchedule), from, until)
			var got []time.Time
			for f := s.Next(from); !f.IsZero() && f.Before(until); f = s.Next(f) {
				got = append(got, f)
			}
			if len(got) != len(want) {
				t.Fatalf("got %d fires, reference %d\n got %v\nwant %v", len(got), len(want), got, want)
			}
			for j := range want {
				if !got[j].Equal(want[j]) {
					t.Fatalf("fire %d: got %s, reference %s", j, got[j], want[j])
				}
			}
		})
	}
}

// bruteForce lists the fires of a 5-field schedule in (from, until).
func bruteForce(s *cronSchedule, from, until time.Time) []time.Time {
	var fires []time.Time
	for m := from.Truncate(time.Minute).Add(time.Minute); m.Before(until); m = m.Add(time.Minute) {
		_, off := m.In(s.loc).Zone()
		_, before := m.Add(-time.Minute).In(s.loc).Zone()
		if s.fixed && before < off && gapMatches(s, m, before, off) {
			fires = append(fires, m) // the jump stands in for the lost times
			continue
		}
		if !refMatches(s, civil(m, off)) {
			continue
		}
		// A fixed-time job skips a wall time it already had at the
		// offset in force three hours earlier.
		_, earlier := m.Add(-3 * time.Hour).In(s.loc).Zone()
		if s.fixed && earlier > off {
			first := m.Add(-time.Duration(earlier-off) * time.Second)
			if _, o := first.In(s.loc).Zone(); o == earlier {
				continue
			}
		}
		fires = append(fires, m)
	}
	return fires
}

// gapMatches reports whether any minute of the wall times skipped at m
// matches.
func gapMatches(s *cronSchedule, m time.Time, before, off int) bool {
	for c := civil(m, before); c.Before(civil(m, off)); c = c.Add(time.Minute) {
		if refMatches(s, c) {
			return true
		}
	}
	return false
}

// refMatches matches a wall time against the masks field by field.
func refMatches(s *cronSchedule, c time.Time) bool {
	bit := func(mask uint64, v int) bool { return mask>>v&1 == 1 }
	dom, dow := bit(s.dom, c.Day()), bit(s.dow, int(c.Weekday()))
	day := dom || dow
	if s.dom&starBit != 0 || s.dow&starBit != 0 {
		day = dom && dow
	}
	return c.Second() == 0 && bit(s.minute, c.Minute()) && bit(s.hour, c.Hour()) &&
		bit(s.month, int(c.Month())) && day
}
