package schedule

import (
	"fmt"
	"math/bits"
	"testing"
	"time"
)

// values lists the values set in a field mask.
func values(mask uint64) []int {
	var vs []int
	for ; mask != 0; mask &= mask - 1 {
		vs = append(vs, bits.TrailingZeros64(mask))
	}
	return vs
}

// drawnField parses expr for seed and returns one field's mask.
func drawnField(t *testing.T, expr, seed string, field func(*cronSchedule) uint64) uint64 {
	t.Helper()
	s, err := ParseFor(expr, time.UTC, seed)
	if err != nil {
		t.Fatalf("ParseFor(%q, %q): %v", expr, seed, err)
	}
	return field(s.(*cronSchedule))
}

func minuteOf(s *cronSchedule) uint64 { return s.minute }
func hourOf(s *cronSchedule) uint64   { return s.hour }
func domOf(s *cronSchedule) uint64    { return s.dom }
func dowOf(s *cronSchedule) uint64    { return s.dow }

// TestDrawnForms checks, for many job names, that every drawn form sets the
// values its syntax promises: how many, within which bounds, how far apart.
func TestDrawnForms(t *testing.T) {
	cases := []struct {
		name     string
		expr     string
		field    func(*cronSchedule) uint64
		lo, hi   int // every value within
		count    int // how many values
		step     int // distance between values (count > 1)
		startMax int // the first value is at most this
	}{
		{"H minute", "H * * * *", minuteOf, 0, 59, 1, 0, 59},
		{"H hour", "0 H * * *", hourOf, 0, 23, 1, 0, 23},
		{"H day of month stays in 1-28", "0 0 H * *", domOf, 1, 28, 1, 0, 28},
		{"H day of week stays in 0-6", "0 0 * * H", dowOf, 0, 6, 1, 0, 6},
		{"H(a-b)", "H(10-19) * * * *", minuteOf, 10, 19, 1, 0, 19},
		{"H(a-a)", "H(7-7) * * * *", minuteOf, 7, 7, 1, 0, 7},
		{"H(a-b) day of month past 28", "0 0 H(29-31) * *", domOf, 29, 31, 1, 0, 31},
		{"H/n", "H/15 * * * *", minuteOf, 0, 59, 4, 15, 14},
		{"H/n that does not divide", "0 H/7 * * *", hourOf, 0, 23, 0, 7, 6},
		{"H/n wider than the range", "H(0-4)/10 * * * *", minuteOf, 0, 4, 1, 0, 4},
		{"H(a-b)/n", "H(30-59)/10 * * * *", minuteOf, 30, 59, 3, 10, 39},
		{"H/n day of month", "0 0 H/7 * *", domOf, 1, 28, 4, 7, 7},
		{"~ minute", "~ * * * *", minuteOf, 0, 59, 1, 0, 59},
		{"~ day of week", "0 0 * * ~", dowOf, 0, 6, 1, 0, 6},
		{"~ day of month", "0 0 ~ * *", domOf, 1, 31, 1, 0, 31},
		{"a~b", "6~15 * * * *", minuteOf, 6, 15, 1, 0, 15},
		{"~b", "~5 * * * *", minuteOf, 0, 5, 1, 0, 5},
		{"a~", "0 20~ * * *", hourOf, 20, 23, 1, 0, 23},
		{"a~b with names", "0 0 * * mon~fri", dowOf, 1, 5, 1, 0, 5},
		{"drawn and written in one list", "H(0-9),30 * * * *", minuteOf, 0, 30, 2, 0, 9},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for i := range 200 {
				vs := values(drawnField(t, tc.expr, fmt.Sprintf("job-%d", i), tc.field))
				if tc.count > 0 && len(vs) != tc.count {
					t.Fatalf("seed job-%d: %v, want %d values", i, vs, tc.count)
				}
				if vs[0] < tc.lo || vs[len(vs)-1] > tc.hi || vs[0] > tc.startMax {
					t.Fatalf("seed job-%d: %v, want within %d-%d starting at most at %d", i, vs, tc.lo, tc.hi, tc.startMax)
				}
				for k := 1; tc.step > 0 && k < len(vs); k++ {
					if vs[k]-vs[k-1] != tc.step {
						t.Fatalf("seed job-%d: %v, want a step of %d", i, vs, tc.step)
					}
				}
				if tc.step > 0 && vs[len(vs)-1]+tc.step <= tc.hi {
					t.Fatalf("seed job-%d: %v stops short of %d", i, vs, tc.hi)
				}
			}
		})
	}
}

// TestDrawnFormsCoverTheirRange checks that names spread over the whole
// range a form draws from, its ends included.
func TestDrawnFormsCoverTheirRange(t *testing.T) {
	cases := []struct {
		expr   string
		field  func(*cronSchedule) uint64
		lo, hi int
	}{
		{"0 0 H * *", domOf, 1, 28},
		{"0 H * * *", hourOf, 0, 23},
		{"0 0 * * H", dowOf, 0, 6},
		{"20~25 * * * *", minuteOf, 20, 25},
		{"H/4 * * * *", minuteOf, 0, 3}, // the start
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			seen := map[int]bool{}
			for i := range 2000 {
				seen[values(drawnField(t, tc.expr, fmt.Sprintf("job-%d", i), tc.field))[0]] = true
			}
			for v := tc.lo; v <= tc.hi; v++ {
				if !seen[v] {
					t.Errorf("no name of 2000 draws %d", v)
				}
			}
			if len(seen) != tc.hi-tc.lo+1 {
				t.Errorf("drew %d distinct values, want %d", len(seen), tc.hi-tc.lo+1)
			}
		})
	}
}

// TestDrawnIsStable pins one name's draws, so that a change of the hash,
// which would move every job of every fleet, fails here first.
func TestDrawnIsStable(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, expr := range []string{"H H * * *", "~ ~ * * *", "H/15 H(8-17) * * 1-5", "0 0 H * H"} {
		a, err := ParseFor(expr, time.UTC, "invoice")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := ParseFor(expr, time.UTC, "invoice")
		if x, y := NextN(a, from, 20), NextN(b, from, 20); fmt.Sprint(x) != fmt.Sprint(y) {
			t.Errorf("%q: two parses for one name differ: %v, %v", expr, x, y)
		}
	}
	s, _ := ParseFor("H H * * *", time.UTC, "invoice")
	if got, want := s.Next(from).Format(time.RFC3339), "2026-01-01T23:21:00Z"; got != want {
		t.Errorf("invoice's H H * * * first fires at %s, pinned %s", got, want)
	}
}

// TestDrawnSpreadsNames checks that names draw different values, and that
// the minute and the hour of one name are drawn apart.
func TestDrawnSpreadsNames(t *testing.T) {
	minutes := map[int]int{}
	sameField := 0
	for i := range 600 {
		s, _ := ParseFor("H H * * *", time.UTC, fmt.Sprintf("host-%d", i))
		cs := s.(*cronSchedule)
		m, h := values(cs.minute)[0], values(cs.hour)[0]
		minutes[m]++
		if m == h {
			sameField++
		}
	}
	for m, n := range minutes {
		if n > 30 { // 10 expected per minute
			t.Errorf("minute %d drawn by %d of 600 names", m, n)
		}
	}
	if sameField > 60 { // about 600/60 if minute and hour are drawn apart
		t.Errorf("%d of 600 names drew the same minute as hour", sameField)
	}
}

// TestDrawnDayRule checks that a drawn day field is restricted: with both
// day fields drawn, either may match (the cron rule's OR); with one drawn
// and one `*`, the drawn one alone decides.
func TestDrawnDayRule(t *testing.T) {
	s, _ := ParseFor("0 0 H * H", time.UTC, "invoice")
	cs := s.(*cronSchedule)
	if cs.domStar || cs.dowStar {
		t.Fatalf("drawn day fields read as *: dom*=%v dow*=%v", cs.domStar, cs.dowStar)
	}
	dom, dow := values(cs.dom)[0], values(cs.dow)[0]
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, fire := range NextN(s, from, 40) {
		if fire.Day() != dom && int(fire.Weekday()) != dow {
			t.Errorf("fired %s: neither day %d nor weekday %d", fire, dom, dow)
		}
	}
	one, _ := ParseFor("0 0 H * *", time.UTC, "invoice")
	for _, fire := range NextN(one, from, 12) {
		if fire.Day() != values(one.(*cronSchedule).dom)[0] {
			t.Errorf("0 0 H * * fired on day %d", fire.Day())
		}
	}
}

// TestParseDrawsForTheEmptyName checks the documented seed of Parse.
func TestParseDrawsForTheEmptyName(t *testing.T) {
	a, _ := Parse("H H H * *", time.UTC)
	b, _ := ParseFor("H H H * *", time.UTC, "")
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if x, y := NextN(a, from, 5), NextN(b, from, 5); fmt.Sprint(x) != fmt.Sprint(y) {
		t.Errorf("Parse %v, ParseFor with \"\" %v", x, y)
	}
}

func TestDelay(t *testing.T) {
	slot := time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		max  time.Duration
	}{
		{"none", 0}, {"sub-second", 300 * time.Millisecond}, {"a second and a half", 1500 * time.Millisecond},
		{"minutes", 10 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[time.Duration]bool{}
			for i := range 500 {
				at := slot.Add(time.Duration(i) * time.Hour)
				d := Delay("invoice", at, tc.max)
				if d != Delay("invoice", at, tc.max) {
					t.Fatalf("two draws for one slot differ")
				}
				if d < 0 || (tc.max > 0 && d >= tc.max) || (tc.max == 0 && d != 0) {
					t.Fatalf("Delay = %v, want in [0, %v)", d, tc.max)
				}
				if tc.max >= time.Second && d%time.Second != 0 {
					t.Fatalf("Delay = %v, want whole seconds", d)
				}
				seen[d] = true
			}
			if tc.max >= time.Minute && len(seen) < 100 {
				t.Errorf("500 slots drew only %d distinct delays", len(seen))
			}
		})
	}
	if Delay("invoice", slot, time.Hour) == Delay("payroll", slot, time.Hour) &&
		Delay("invoice", slot.Add(time.Hour), time.Hour) == Delay("payroll", slot.Add(time.Hour), time.Hour) {
		t.Error("two names drew the same delays for two slots")
	}
}
