package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// finishedWithSkips is the newest finished run of recs (newest first)
// whose span holds two skipped slots, and those skips.
func finishedWithSkips(recs []run.Record) (run.Record, []run.Record) {
	for _, r := range recs {
		if r.Outcome != run.OK || r.EndedAt.Sub(r.StartedAt) < 24*time.Second {
			continue
		}
		var skips []run.Record
		for _, k := range recs {
			if k.Outcome == run.Skipped && k.ScheduledAt.After(r.StartedAt) && k.ScheduledAt.Before(r.EndedAt) {
				skips = append(skips, k)
			}
		}
		if len(skips) == 2 {
			return r, skips
		}
	}
	return run.Record{}, nil
}

// axisLabelRE is a time on the timeline's axis.
var axisLabelRE = regexp.MustCompile(`\d\d:\d\d(:\d\d)?`)

// timeAxis maps a time to its column on screen from the axis's labels:
// the first and the last, which are their ticks' columns.
func timeAxis(t *testing.T, screen string) func(time.Time) float64 {
	t.Helper()
	var axis string
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		if strings.Contains(l, "timeline · ") && i+1 < len(lines) {
			axis = lines[i+1]
		}
	}
	locs := axisLabelRE.FindAllStringIndex(axis, -1)
	if len(locs) < 2 {
		t.Fatalf("no time axis of two labels on the screen:\n%s", screen)
	}
	at := func(loc []int) time.Time {
		layout := "15:04:05"
		if loc[1]-loc[0] == 5 {
			layout = "15:04"
		}
		c, err := time.ParseInLocation(layout, axis[loc[0]:loc[1]], time.Local)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		d := time.Date(now.Year(), now.Month(), now.Day(), c.Hour(), c.Minute(), c.Second(), 0, time.Local)
		if d.Sub(now) > 12*time.Hour { // the label is of yesterday, before midnight
			d = d.AddDate(0, 0, -1)
		}
		return d
	}
	a, b := locs[0], locs[len(locs)-1]
	ta, tb := at(a), at(b)
	cell := float64(tb.Sub(ta)) / float64(b[0]-a[0])
	return func(x time.Time) float64 { return float64(a[0]) + float64(x.Sub(ta))/cell }
}

// checkBar holds the lane of every10 to the run and its skips: one bar
// from the start's column to the end's, unbroken, with the skips' marks
// on it, each within one column of its slot's.
func checkBar(t *testing.T, screen string, ran run.Record, skips []run.Record) {
	t.Helper()
	col := timeAxis(t, screen)
	lane := []rune(lineWith(screen, " every10 "))
	near := func(want float64, r rune) int {
		for _, c := range []int{int(want), int(want) - 1, int(want) + 1} {
			if c >= 0 && c < len(lane) && lane[c] == r {
				return c
			}
		}
		t.Fatalf("no %q within a column of %.1f in the lane\n%s\n(the run %s, %s to %s)", r, want, screen,
			ran.RunID, ran.StartedAt.Format(time.TimeOnly), ran.EndedAt.Format(time.TimeOnly))
		return 0
	}
	end := near(col(ran.EndedAt), '●')
	start := end
	for start > 0 && (lane[start-1] == '━' || lane[start-1] == '○') {
		start--
	}
	if want := col(ran.StartedAt); float64(start) < want-1.5 || float64(start) > want+1.5 {
		t.Errorf("the bar starts at column %d, its run's start maps to %.1f:\n%s", start, want, screen)
	}
	var marks []int
	for c := start; c < end; c++ {
		if lane[c] == '○' {
			marks = append(marks, c)
		}
	}
	if len(marks) != 2 {
		t.Fatalf("the bar %q holds %d skip marks, want 2:\n%s", string(lane[start:end+1]), len(marks), screen)
	}
	for i, k := range skips[len(skips)-2:] { // oldest last in the history: the marks' order reversed
		want := col(k.ScheduledAt)
		if got := marks[1-i]; float64(got) < want-1.5 || float64(got) > want+1.5 {
			t.Errorf("the skip of %s is marked at column %d, its slot maps to %.1f:\n%s",
				k.ScheduledAt.Format(time.TimeOnly), got, want, screen)
		}
	}
}

// runningSinceRE is the cursor's line on the running run.
var runningSinceRE = regexp.MustCompile(`running every10 since (\S+)`)

// runningBar is the length of the running run's bar (its columns before
// the head) and the start the cursor's line names, awaited on screen.
func runningBar(t *testing.T, tm *tmuxTerm) (int, string) {
	t.Helper()
	sc := tm.await(40*time.Second, "a running run", func(sc string) bool {
		return strings.ContainsRune(lineWith(sc, " every10 "), '▶') && runningSinceRE.MatchString(sc)
	})
	lane := []rune(lineWith(sc, " every10 "))
	n := 0
	for i := indexRune(lane, '▶') - 1; i >= 0 && (lane[i] == '━' || lane[i] == '○'); i-- {
		n++
	}
	return n, runningSinceRE.FindStringSubmatch(sc)[1]
}

func indexRune(rs []rune, r rune) int {
	for i, x := range rs {
		if x == r {
			return i
		}
	}
	return -1
}
