package service

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/base/run"
	"cronvisor/internal/base/schedule"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/lock/file"
	"cronvisor/runner"
)

// scheduledService is a service over n hourly jobs named job-NNNNNN with
// a running scheduler on a fake clock, stopped at the test's end.
func scheduledService(t testing.TB, n int) *Service {
	t.Helper()
	jobs := make([]config.Job, n)
	sched, err := schedule.Parse("@hourly", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	one := config.Job{Schedule: "@hourly", Sched: sched, Location: time.UTC, Enabled: true,
		Overlap: config.OverlapSkip, Command: []string{"true"}, Timeout: time.Minute}
	for i := range jobs {
		j := one
		j.Name = fmt.Sprintf("job-%06d", i)
		j.Lock = j.Name
		jobs[i] = j
	}
	locker := file.NewLocker(filepath.Join(t.TempDir(), "locks"), runner.InRun)
	sup := runner.NewSupervisor(locker, runner.NopRecorder{}, func(run.Event) {})
	clk := clock.NewFake(time.Date(2026, 6, 1, 12, 0, 30, 0, time.UTC))
	sc := runner.NewScheduler(sup, clk, func(run.Event) {})
	s, err := New(sup, locker, &config.Config{Jobs: jobs}, WithScheduler(sc))
	if err != nil {
		t.Fatal(err)
	}
	armed := clk.TimerChanged()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); sc.Run(ctx, jobs) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	select { // the scheduler arms its timer once every job is scheduled
	case <-armed:
	case <-time.After(time.Minute):
		t.Fatalf("the scheduler did not schedule %d jobs within a minute", n)
	}
	return s
}

// TestJobsNamedCostsOneJob (issue 39): the status of one job among
// 100,000 is built from that job alone. A status that walked or copied
// every job (their next fires, their locks) would allocate megabytes;
// one job's costs a few KiB, as with 1,000 jobs.
func TestJobsNamedCostsOneJob(t *testing.T) {
	ctx := context.Background()
	perCall := map[int]float64{}
	for _, n := range []int{1000, 100000} {
		s := scheduledService(t, n)
		name := fmt.Sprintf("job-%06d", n/2)
		got, err := s.JobsNamed(ctx, []string{name, "no-such-job"})
		if err != nil || len(got) != 1 || got[0].Name != name || got[0].State != ctl.StateIdle ||
			!got[0].NextRun.Equal(time.Date(2026, 6, 1, 13, 0, 0, 0, time.UTC)) {
			t.Fatalf("%d jobs: JobsNamed(%s) = %+v, %v; want its idle status, next run 13:00", n, name, got, err)
		}
		perCall[n] = bytesPerCall(t, func() {
			if _, err := s.JobsNamed(ctx, []string{name}); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Logf("bytes allocated per status of one job: %.0f at 1,000 jobs, %.0f at 100,000", perCall[1000], perCall[100000])
	if perCall[100000] > 64<<10 || perCall[100000] > 2*perCall[1000] {
		t.Errorf("one job's status allocates %.0f bytes at 100,000 jobs, %.0f at 1,000; want under 64 KiB and alike",
			perCall[100000], perCall[1000])
	}
}

// bytesPerCall is the heap bytes f allocates, averaged over 20 calls.
func bytesPerCall(t *testing.T, f func()) float64 {
	t.Helper()
	const calls = 20
	f() // warm: one-time allocations are not a call's
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range calls {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / calls
}
