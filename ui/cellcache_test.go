package ui

import (
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// TestCachedRowsDrawTheSame: the jobs table's rows drawn through the
// cell cache, first filling it and then from it, are the rows drawn
// without it, in colour, live and grey, selected or not.
func TestCachedRowsDrawTheSame(t *testing.T) {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	live, grey := newStyles(r, defaultTheme()), newStyles(r, greyTheme(defaultTheme()))
	f := newFake()
	f.jobs = manyJobs(50)
	for i := range f.jobs {
		f.jobs[i].Durations = fixtureDurations[fixtureJobs()[i%7].Name] // a sparkline on most rows
	}
	m := loaded(t, f, Options{}, 120, 40)
	shown := m.jobs.shownCols()
	widths := layout(m.jobs.columns(shown), 118)
	var cache cellCache
	for pass := range 2 {
		for _, g := range []bool{false, true} {
			st := live
			if g {
				st = grey
			}
			for i := range m.c.data.jobs {
				cells := m.jobs.cells(nil, shown, m.c.data.at(i), m.c.data.jobs[i].learned, widths)
				selected := i%7 == 0
				want := cachedRow(st, nil, g, cells, widths, selected, 120)
				if got := cachedRow(st, &cache, g, cells, widths, selected, 120); got != want {
					t.Fatalf("pass %d, grey %v, job %d: cached %q, want %q", pass, g, i, got, want)
				}
				if !selected && !strings.Contains(want, "\x1b[") {
					t.Fatalf("row %q has no styling to cache", want)
				}
			}
		}
	}
	if len(cache.cells) == 0 {
		t.Error("nothing was cached")
	}
}
