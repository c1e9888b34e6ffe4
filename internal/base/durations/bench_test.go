package durations

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// BenchmarkEnded is what each end told costs the learner: a job nobody
// asked about (off: the rule's lookup and a map miss), and a job with
// warn_fast: auto and a full window (the figures judged, the run
// pushed). The floor is a mutex and a map lookup, the least any
// per-job memo on the end path costs (the last-ok memo's shape).
func BenchmarkEnded(b *testing.B) {
	now := time.Unix(1_800_000_000, 0)
	rules := map[string]FastRule{"auto": {Learned: true}}
	var seed []Sample
	for i := range Window {
		seed = append(seed, Sample{RunID: strconv.Itoa(i), Took: time.Duration(9000+40*i) * time.Millisecond, Ended: now})
	}
	src := &source{samples: map[string][]Sample{"auto": seed}}
	l := NewLearner(LearnerConfig{Source: src, Now: func() time.Time { return now },
		Fast: func(job string) FastRule { return rules[job] }})
	ctx := context.Background()
	if err := l.Warm(ctx, "auto"); err != nil {
		b.Fatal(err)
	}
	b.Run("floor", func(b *testing.B) {
		var mu sync.Mutex
		memo := map[string]int64{"off": 1}
		for b.Loop() {
			mu.Lock()
			memo["off"]++
			mu.Unlock()
		}
	})
	for _, job := range []string{"off", "auto"} {
		e := run.End{Job: job, RunID: "r", Outcome: run.OK, Started: now.Add(-10 * time.Second), Ended: now}
		b.Run(job, func(b *testing.B) {
			for b.Loop() {
				l.Ended(ctx, e)
			}
		})
	}
}

// BenchmarkStatsOf is a status's or a scrape's read of 1,000 jobs'
// figures from windows in memory.
func BenchmarkStatsOf(b *testing.B) {
	now := time.Unix(1_800_000_000, 0)
	l := NewLearner(LearnerConfig{Now: func() time.Time { return now }})
	ctx := context.Background()
	names := make([]string, 1000)
	for j := range names {
		names[j] = "job-" + strconv.Itoa(j)
		for i := range Window {
			l.Ended(ctx, run.End{Job: names[j], RunID: "r", Outcome: run.OK,
				Started: now.Add(-time.Duration(i+1) * time.Second), Ended: now})
		}
	}
	for b.Loop() {
		if st, _ := l.StatsOf(ctx, names); len(st) != len(names) {
			b.Fatal(len(st))
		}
	}
}
