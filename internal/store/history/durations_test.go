package history

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"cronvisor/internal/base/durations"
	"cronvisor/internal/base/run"
)

// OKSamples gives each job's newest successful runs with a start and an
// end, at most limit, newest first, after since; failures, skips, open
// runs and jobs without any are left out.
func TestOKSamples(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for i := range 5 {
		at := t0.Add(time.Duration(i) * time.Hour)
		fin(t, s, run.Record{Job: "a", RunID: fmt.Sprint("a", i), Outcome: run.OK, ScheduledAt: at, StartedAt: at,
			EndedAt: at.Add(time.Duration(i+1) * time.Second), Host: "h"})
	}
	fin(t, s, run.Record{Job: "a", RunID: "failed", Outcome: run.Failed, ScheduledAt: t0.Add(9 * time.Hour),
		StartedAt: t0.Add(9 * time.Hour), EndedAt: t0.Add(10 * time.Hour)})
	fin(t, s, run.Record{Job: "a", RunID: "skip", Outcome: run.Skipped, ScheduledAt: t0.Add(9 * time.Hour)})
	got, err := s.OKSamples(ctx, []string{"a", "none"}, t0.Add(30*time.Minute), 3)
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, smp := range got["a"] {
		text = append(text, smp.RunID+":"+smp.Took.String())
	}
	if fmt.Sprint(text) != "[a4:5s a3:4s a2:3s]" || len(got) != 1 || got["a"][0].Host != "h" ||
		!got["a"][0].Ended.Equal(t0.Add(4*time.Hour+5*time.Second)) {
		t.Errorf("OKSamples = %v (%d jobs)", text, len(got))
	}
}

func fin(t *testing.T, s *Store, r run.Record) {
	t.Helper()
	if err := s.Finish(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkOKSamples reads the windows of 1,000 jobs, half of which have
// 200 successful runs and half none, in one call; the floor is
// Summaries of the same jobs, the start-up's one-statement read.
func BenchmarkOKSamples(b *testing.B) {
	s, _ := openTemp(b)
	const jobs, runs = 1000, 200
	names := make([]string, jobs)
	var writes []Write
	t0 := time.Now().Add(-time.Duration(runs) * time.Minute)
	for j := range jobs {
		names[j] = "job-" + strconv.Itoa(j)
		if j%2 == 1 {
			continue
		}
		for i := range runs {
			at := t0.Add(time.Duration(i) * time.Minute)
			writes = append(writes, Write{Kind: WriteFinish, Record: run.Record{Job: names[j], RunID: fmt.Sprintf("%d-%d", j, i),
				Outcome: run.OK, ScheduledAt: at, StartedAt: at, EndedAt: at.Add(time.Second)}})
		}
	}
	for from := 0; from < len(writes); from += 5000 {
		for _, err := range s.Apply(context.Background(), writes[from:min(from+5000, len(writes))]) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("floor-summaries", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Summaries(context.Background(), names); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("windows", func(b *testing.B) {
		for b.Loop() {
			got, err := s.OKSamples(context.Background(), names, time.Time{}, durations.Window)
			if err != nil || len(got) != jobs/2 {
				b.Fatal(len(got), err)
			}
		}
	})
}
