package schedule

import (
	"fmt"
	"math/rand/v2"
	"slices"
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

// propertyZones are the zones the reference comparison covers: the usual
// one-hour DST on both hemispheres, negative DST (Dublin), a 30-minute
// shift (Lord Howe), a 45-minute zone with DST (Chatham), a zone whose DST
// rules moved often (Santiago), a half-hour zone without DST and UTC.
var propertyZones = []string{
	"America/New_York", "Europe/London", "Europe/Dublin", "Australia/Lord_Howe",
	"Pacific/Chatham", "America/Santiago", "Asia/Kolkata", "UTC",
}

// TestNextAgainstCrond holds Next against crond's main loop, replayed
// minute by minute (crond), for random expressions started a few hours
// before each change of offset of random years from 1970 to 2100, in both
// zone databases.
func TestNextAgainstCrond(t *testing.T) {
	for _, db := range zoneDBs(t) {
		r := rand.New(rand.NewPCG(3, 4))
		for _, zone := range propertyZones {
			loc := mustLoad(t, db, zone)
			var changes []time.Time
			for range 8 {
				changes = append(changes, changesIn(loc, 1970+r.IntN(131), 2)...)
			}
			for len(changes) < 8 { // UTC, Kolkata: random days instead
				changes = append(changes, time.Date(1970+r.IntN(130), time.Month(1+r.IntN(12)), 1+r.IntN(28), 0, 0, 0, 0, time.UTC))
			}
			var starts []time.Time
			for _, c := range changes {
				starts = append(starts, c, c, c)
			}
			for i, at := range starts {
				expr := randomExpr(r, false)
				if i%4 != 0 { // mostly every day, so the change of offset is in play
					f := strings.Fields(expr)
					expr = strings.Join(append(f[:2], "*", "*", "*"), " ")
				}
				from := at.Add(-time.Duration(1+r.IntN(180)) * time.Minute).Truncate(time.Minute)
				t.Run(fmt.Sprintf("%s/%s/%s/%s", db.name, zone, from.Format(time.DateOnly), expr), func(t *testing.T) {
					compareWithCrond(t, expr, loc, from, 40, from.Add(12*time.Hour))
				})
			}
		}
	}
}

// TestNextAgainstCrondAnywhere does the same from random instants of random
// zones, for expressions that restrict the day fields in every way.
func TestNextAgainstCrondAnywhere(t *testing.T) {
	dbs := zoneDBs(t)
	files, err := goZoneFiles()
	if err != nil {
		t.Fatal(err)
	}
	var zones []string
	for name := range files {
		zones = append(zones, name)
	}
	slices.Sort(zones)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 120 {
		db := dbs[i%len(dbs)]
		zone := zones[r.IntN(len(zones))]
		loc, err := db.load(zone)
		if err != nil {
			continue // a zone only the other database has
		}
		expr := randomExpr(r, false)
		from := time.Unix(r.Int64N(4102444800), 0).UTC().Truncate(time.Minute) // 1970 to 2100
		t.Run(fmt.Sprintf("%s/%s/%s/%s", db.name, zone, from.Format(time.DateOnly), expr), func(t *testing.T) {
			compareWithCrond(t, expr, loc, from, 6, from.AddDate(0, 0, 31))
		})
	}
}

// compareWithCrond checks that Next's first n fires after from, up to
// until, are crond's, at second precision and in number.
func compareWithCrond(t *testing.T, expr string, loc *time.Location, from time.Time, n int, until time.Time) {
	t.Helper()
	s, err := Parse(expr, loc)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := crond(s.(*cronSchedule), from, n, until)
	var got []time.Time
	for f := s.Next(from); !f.IsZero() && f.Before(until) && len(got) < n; f = s.Next(f) {
		got = append(got, f.UTC().Truncate(time.Second))
	}
	if !slices.EqualFunc(got, want, time.Time.Equal) {
		t.Fatalf("%q in %s from %s:\n got %v\nwant %v (crond)", expr, loc, from.Format(time.RFC3339), got, want)
	}
}

// changesIn returns up to max instants in year at which loc's offset
// changes, found by probing every six hours and bisecting.
func changesIn(loc *time.Location, year, max int) []time.Time {
	var out []time.Time
	t := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC)
	endYear := t.AddDate(1, 0, 0)
	for ; t.Before(endYear) && len(out) < max; t = t.Add(6 * time.Hour) {
		next := t.Add(6 * time.Hour)
		if off := offsetAt(loc, next); off != offsetAt(loc, t) {
			out = append(out, firstWith(loc, t, next, off))
		}
	}
	return out
}
