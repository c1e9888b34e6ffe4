package ui

import (
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"cronvisor/internal/base/run"
)

// BenchmarkViewTimeline draws the timeline of 1,000 jobs (a tenth of them
// running), each with a run every 10 s through the 5-minute window, some
// skipped and some failed: a frame of the whole screen, at 200x50 and at
// 80x24. It reports the slowest frame too, against issue 43's 50 ms.
func BenchmarkViewTimeline(b *testing.B) {
	for _, size := range []struct {
		name string
		w, h int
	}{{"200x50", 200, 50}, {"80x24", 80, 24}} {
		b.Run(size.name, func(b *testing.B) {
			m := timelineOf1000(b, size.w, size.h)
			var slowest time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				_ = m.View()
				slowest = max(slowest, time.Since(t0))
			}
			b.ReportMetric(float64(slowest)/float64(time.Millisecond), "max-ms/frame")
		})
	}
}

// timelineOf1000 is a model showing the timeline of 1,000 jobs with 30
// records each in its window, the cursor half-way down.
func timelineOf1000(b *testing.B, w, h int) Model {
	f := newFake()
	f.jobs = manyJobs(1000)
	f.records = nil
	m := New(f, Options{Title: sockPath, Clock: fixedClock})
	m, _ = m.update(tea.WindowSizeMsg{Width: w, Height: h})
	m, _ = m.update(snapshotMsg{jobs: f.jobs, locks: f.locks, withLocks: true})
	outcomes := []run.Outcome{run.OK, run.OK, run.Skipped, run.OK, run.Failed}
	var recs []run.Record
	for k := range 30 {
		slot := at(-time.Duration(k+1) * 10 * time.Second)
		for i, j := range f.jobs {
			r := run.Record{Job: j.Name, RunID: j.Name + "-" + itoa(k), Outcome: outcomes[(i+k)%len(outcomes)], ScheduledAt: slot}
			if r.Outcome != run.Skipped {
				r.StartedAt, r.EndedAt = slot, slot.Add(time.Duration(1+i%7)*time.Second)
			}
			recs = append(recs, r)
		}
	}
	m, _ = m.update(keyMsg("4"))
	m, _ = m.update(timelineMsg{since: at(-10 * time.Minute), pages: [][]run.Record{recs}})
	m, _ = m.update(keyMsg("pgdown"))
	if m.tab != tabTimeline || len(m.tl.lanes) != 1000 {
		b.Fatalf("tab %v, %d lanes; want the timeline of 1,000 jobs", m.tab, len(m.tl.lanes))
	}
	return m
}
