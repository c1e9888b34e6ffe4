package ui

import (
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// TestTookCell: the sparkline's bars span the band and the runs outside
// it, its colours say which runs lie above or below the band (nothing
// before 10 runs), and a narrow column keeps the newest runs.
func TestTookCell(t *testing.T) {
	steady := []int64{1000, 1100, 1200, 1300, 1400, 1500, 1600, 1700}
	tests := []struct {
		name       string
		d          *ctl.Durations
		w          int
		text, mark string
	}{
		{name: "none", d: nil, w: 8, text: "—"},
		{name: "no runs", d: &ctl.Durations{}, w: 8, text: "—"},
		{name: "band to bars", d: &ctl.Durations{Runs: 20, P5MS: 1000, P95MS: 1700, RecentMS: steady}, w: 8,
			text: "▁▂▃▄▅▆▇█", mark: "00000000"},
		{name: "the newest that fit", d: &ctl.Durations{Runs: 20, P5MS: 1000, P95MS: 1700, RecentMS: steady}, w: 3,
			text: "▆▇█", mark: "000"},
		{name: "room for the newest run's", d: &ctl.Durations{Runs: 20, P5MS: 1000, P95MS: 1700, RecentMS: steady}, w: 14,
			text: "▁▂▃▄▅▆▇█ 1.7s", mark: "00000000mmmmm"},
		{name: "above the p95", d: &ctl.Durations{Runs: 20, P5MS: 1000, P95MS: 1100, RecentMS: []int64{1000, 1100, 3000, 1050}}, w: 4,
			text: "▁▁█▁", mark: "0010"},
		{name: "above the slow bound, not the p95", d: &ctl.Durations{Runs: 20, P5MS: 1000, P95MS: 1100, SlowAfterMS: 2500,
			RecentMS: []int64{1000, 2000, 3000, 1050}}, w: 4, text: "▁▅█▁", mark: "0010"},
		{name: "below the fast bound", d: &ctl.Durations{Runs: 20, P5MS: 1000, P95MS: 1100, FastBelowMS: 250,
			RecentMS: []int64{1000, 100, 1100}}, w: 4, text: "▇▁█", mark: "020"},
		{name: "nothing judged before 10 runs", d: &ctl.Durations{Runs: 9, P5MS: 1000, P95MS: 1100, FastBelowMS: 250,
			RecentMS: []int64{1000, 100, 3000}}, w: 4, text: "▃▁█", mark: "000"},
		{name: "all alike", d: &ctl.Durations{Runs: 1, P5MS: 500, P95MS: 500, RecentMS: []int64{500}}, w: 4,
			text: "▄", mark: "0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tookCell(learnedOf(tc.d), tc.w)
			if c.text != tc.text || c.marks != tc.mark {
				t.Errorf("cell %q marks %q, want %q %q", c.text, c.marks, tc.text, tc.mark)
			}
			if n := ansi.StringWidth(c.text); n > tc.w {
				t.Errorf("cell %q is %d wide, more than %d", c.text, n, tc.w)
			}
		})
	}
}

// TestRenderMarked: each mark gets its style (warn above the band), a
// run of one mark is one styled span, and the cell is padded to width.
func TestRenderMarked(t *testing.T) {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	st := newStyles(r, defaultTheme())
	got := renderMarked(st, "▁▁█▁ 2s", "0010mmm", 9)
	want := st.muted.Render("▁▁") + st.warn.Render("█") + st.muted.Render("▁") + st.muted.Render(" 2s") + "  "
	if got != want {
		t.Errorf("rendered %q, want %q", got, want)
	}
	if ansi.StringWidth(got) != 9 {
		t.Errorf("rendered %d wide, want 9", ansi.StringWidth(got))
	}
}

// TestLearnedSurvivesEvents: a run's events do not drop the row's
// learned durations (no event carries them), and a re-read that brings
// the same figures is no change, so the table is not sorted again.
func TestLearnedSurvivesEvents(t *testing.T) {
	s := newStore()
	s.setJobs(fixtureJobs())
	before := *s.learnedFor("sync_orders")
	s.apply(ctl.WireEvent{Type: ctl.EventRunFinished, Job: "sync_orders", RunID: "r-sync-7", Outcome: run.OK,
		StartedAt: at(-25 * time.Second), Time: ref})
	if l := s.learnedFor("sync_orders"); l == nil || *l != before {
		t.Fatalf("after run_finished the row's durations are %+v, want %+v", l, before)
	}
	s.setJobs(fixtureJobs())
	if s.updateJobs(fixtureJobs()) {
		t.Error("a re-read with the same durations changed the table")
	}
	changed := fixtureJobs()
	changed[6].Durations = &ctl.Durations{Runs: 51, RecentMS: []int64{1}}
	if !s.updateJobs(changed) {
		t.Error("a re-read with new durations did not change the table")
	}
}

// TestDurChart: the detail's chart is a bar a run from zero, failures
// topped by their glyph, the band's bound dotted and named on the axis,
// exactly h lines that fit the width, at 80 and 200 columns.
func TestDurChart(t *testing.T) {
	st := newStyles(lipgloss.NewRenderer(io.Discard), defaultTheme()) // no colours: the text alone
	rec := func(o run.Outcome, took time.Duration) run.Record {
		return run.Record{Outcome: o, StartedAt: ref, EndedAt: ref.Add(took)}
	}
	recs := []run.Record{rec(run.OK, 2*time.Second), rec(run.OK, 4*time.Second), rec(run.Failed, time.Second),
		rec(run.Timeout, 8*time.Second), rec(run.OK, 3*time.Second)}
	l := learnedOf(&ctl.Durations{Runs: 20, P5MS: 1800, P95MS: 3500, P99MS: 3900, MaxMS: 4000, RecentMS: []int64{2000}})
	for _, w := range []int{80, 200} {
		got := durChart(st, l, recs, 4, w)
		want := []string{
			" 8.0s ┤      ⧖",
			"      ┤      █",
			"  p95 ┤┈┈█┈┈┈█┈▄┈",
			"    0 ┤█ █ ✗ █ █",
		}
		if len(got) != len(want) {
			t.Fatalf("width %d: %d lines, want %d", w, len(got), len(want))
		}
		for i := range want {
			if g := strings.TrimRight(got[i], " "); g != want[i] {
				t.Errorf("width %d, line %d: %q, want %q", w, i, g, want[i])
			}
			if n := ansi.StringWidth(got[i]); n > w {
				t.Errorf("width %d, line %d is %d wide", w, i, n)
			}
		}
	}
	// More runs than columns: the newest that fit, a bar a column.
	many := make([]run.Record, 300)
	for i := range many {
		many[i] = rec(run.OK, time.Duration(i+1)*time.Second)
	}
	got := durChart(st, nil, many, 2, 80)
	if top := strings.TrimRight(got[0], " "); !strings.HasPrefix(top, " 5m ┤") || ansi.StringWidth(top) != 80 {
		t.Errorf("top line %q, want the newest runs to fill 80 columns under 5m", top)
	}
}

// TestFigureLines: the learned figures wrap at their separators into at
// most two lines, and say when nothing is judged yet.
func TestFigureLines(t *testing.T) {
	l := learnedOf(fixtureDurations["sync_orders"])
	if got := figureLines(l, 200); len(got) != 1 ||
		got[0] != "50 ok runs · p50 6.1s · p95 8.0s · p99 8.4s · max 9.1s · slow after 18s · fast below 1.5s · suggested timeout 1m10s" {
		t.Errorf("at 200: %q", got)
	}
	got := figureLines(l, 40)
	if len(got) != 2 || got[0] != "50 ok runs · p50 6.1s · p95 8.0s" {
		t.Errorf("at 40: %q", got)
	}
	if got := figureLines(learnedOf(fixtureDurations["backup_db"]), 200); !strings.Contains(got[0], "nothing judged before 10 runs") {
		t.Errorf("one run: %q", got)
	}
}

// TestDurationsGiveWayOnShortTerminals: the detail's durations section
// leaves room for the runs and the output: the chart shrinks, then goes,
// then the advice takes one line, then the section goes; every screen
// fits.
func TestDurationsGiveWayOnShortTerminals(t *testing.T) {
	tests := []struct {
		h                int
		chart, durations bool
	}{
		{h: 14, chart: false, durations: false},
		{h: 17, chart: false, durations: false},
		{h: 20, chart: false, durations: true}, // the advice on one line, cut
		{h: 24, chart: true, durations: true},
	}
	for _, tc := range tests {
		t.Run(strconv.Itoa(tc.h), func(t *testing.T) {
			m := loaded(t, newFake(), Options{}, 80, tc.h)
			m, cmd := press(selectJob(t, m, "refund_orders"), "enter")
			m, cmd = follow(t, m, cmd)
			m, _ = follow(t, m, cmd)
			screen := m.View()
			checkScreen(t, screen, 80, tc.h)
			for _, want := range []string{"── runs and skips", "── live output"} {
				if !strings.Contains(screen, want) {
					t.Errorf("no %q at %d rows:\n%s", want, tc.h, screen)
				}
			}
			if got := strings.Contains(screen, "── durations"); got != tc.durations {
				t.Errorf("durations shown %v at %d rows, want %v:\n%s", got, tc.h, tc.durations, screen)
			}
			if got := strings.Contains(screen, "0 ┤"); got != tc.chart {
				t.Errorf("chart shown %v at %d rows, want %v:\n%s", got, tc.h, tc.chart, screen)
			}
		})
	}
}
