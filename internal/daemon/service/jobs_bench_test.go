package service

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/schedule"
	"cronvisor/internal/config"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/file"
	"cronvisor/runner"
)

// BenchmarkJobs is one status poll (what the console and `status` ask
// for) with 1,000 jobs whose lock files exist, as they do once each job
// has run: Jobs reads every lock through locker.List.
func BenchmarkJobs(b *testing.B) {
	const n = 1000
	locker := file.NewLocker(filepath.Join(b.TempDir(), "locks"), runner.InRun)
	sched, err := schedule.Parse("@hourly", time.UTC)
	if err != nil {
		b.Fatal(err)
	}
	jobs := make([]config.Job, n)
	ctx := context.Background()
	for i := range jobs {
		name := fmt.Sprintf("job-%04d", i)
		jobs[i] = config.Job{Name: name, Schedule: "@hourly", Sched: sched, Location: time.UTC, Lock: name,
			Enabled: true, Overlap: config.OverlapSkip, Command: []string{"true"}, Timeout: time.Minute}
		lease, err := locker.Acquire(ctx, lock.Request{Name: jobs[i].Lock, Record: lock.Record{Holder: run.Holder{Job: jobs[i].Name}}})
		if err != nil {
			b.Fatal(err)
		}
		if err := lease.Release(); err != nil {
			b.Fatal(err)
		}
	}
	sup := runner.NewSupervisor(locker, runner.NopRecorder{}, func(run.Event) {})
	s, err := New(sup, locker, &config.Config{Jobs: jobs})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		st, err := s.Jobs(ctx)
		if err != nil || len(st) != n {
			b.Fatalf("Jobs: %d statuses, %v", len(st), err)
		}
	}
	b.ReportMetric(n, "jobs")
}
