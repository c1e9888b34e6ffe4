package schedule

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFiresAgainstCronie replays testdata/cronie/DB/*.tsv: the first fires
// after a start instant as cronie's main loop gave them, for random and
// DST-adjacent expressions, zones and instants from 1970 to 2100, each in
// the zone database it was computed with.
func TestFiresAgainstCronie(t *testing.T) {
	for _, db := range zoneDBs(t) {
		files, err := filepath.Glob(filepath.Join("testdata", "cronie", db.name, "*.tsv"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s database: no tables (%v)", db.name, err)
		}
		for _, file := range files {
			t.Run(db.name+"/"+filepath.Base(file), func(t *testing.T) {
				replayFires(t, db, file)
			})
		}
	}
}

func replayFires(t *testing.T, db zoneDB, file string) {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	locs := map[string]*time.Location{}
	rows, mismatches, refused, stale, fold := 0, 0, 0, 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		expr, zone, start := cols[0], cols[1], cols[2]
		loc, ok := locs[zone]
		if !ok {
			loc = mustLoad(t, db, zone)
			locs[zone] = loc
		}
		from, err := time.Parse(time.RFC3339, start)
		if err != nil {
			t.Fatalf("%s:%d: %v", file, n, err)
		}
		var want []time.Time
		for _, w := range strings.Fields(cols[3]) {
			wt, err := time.Parse(time.RFC3339, w)
			if err != nil {
				t.Fatalf("%s:%d: %v", file, n, err)
			}
			want = append(want, wt)
		}
		s, err := Parse(expr, loc)
		if err != nil {
			if differenceOf(cronieRow{expr: expr, ok: true}, err) != "" {
				refused++ // a deliberate difference (TestSyntaxAgainstCronie)
				continue
			}
			t.Errorf("%s:%d: %q: %v", file, n, expr, err)
			continue
		}
		rows++
		got := NextN(s, from, len(want))
		for i := range got {
			got[i] = got[i].UTC().Truncate(time.Second)
		}
		if !equalTimes(got, want) && staleOffset(loc, from, want) {
			stale++ // see staleOffset
			continue
		}
		if !equalTimes(got, want) && startsInFold(loc, from) {
			fold++ // see startsInFold
			continue
		}
		if !equalTimes(got, want) {
			mismatches++
			if mismatches <= 20 {
				t.Errorf("%s:%d: %q in %s from %s:\n got %v\nwant %v (cronie)", filepath.Base(file), n, expr, zone, start, got, want)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if mismatches > 0 {
		t.Errorf("%d of %d rows differ from cronie", mismatches, rows)
	}
	t.Logf("%d rows compared, %d refused on purpose, %d across an offset change cron does not see, %d started inside a fold", rows, refused, stale, fold)
}

func equalTimes(a, b []time.Time) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// staleOffset reports whether the zone changed its offset without a change
// of DST between from and the last of the fires. crond re-reads its offset
// only when tm_isdst flips (cron.c set_time), so after such a change
// (Kiritimati 1979 and 1994, Monrovia 1972, Apia 2011, Moscow 2014) it
// goes on running jobs at the old offset's wall times until it is
// restarted; cronvisor follows the zone's real offset, which is what a
// restarted crond does too.
func staleOffset(loc *time.Location, from time.Time, fires []time.Time) bool {
	if len(fires) == 0 {
		return false
	}
	until := fires[len(fires)-1]
	for t := from; t.Before(until); {
		next := boundaryAfter(loc, t)
		if next.IsZero() || next.After(until) {
			return false
		}
		before, after := next.Add(-time.Second).In(loc), next.In(loc)
		if offsetAt(loc, before) != offsetAt(loc, after) && before.IsDST() == after.IsDST() {
			return true
		}
		t = next
	}
	return false
}

// startsInFold reports whether from lies just after a fall back, or at the
// very instant of a jump. A crond started there has no memory of what came
// before: after a fall back it runs fixed-time jobs again in the second
// pass, and at a jump it runs none of the skipped times. Next answers as a
// crond that was already running, since it is asked mid-run far more often
// than at a start (a restarted supervisor has its history for catch_up).
func startsInFold(loc *time.Location, from time.Time) bool {
	at, prev, ok := recentChange(loc, from, recentWindow)
	return ok && (prev > offsetAt(loc, from) || at.Equal(from))
}
