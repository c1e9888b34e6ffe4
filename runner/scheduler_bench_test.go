package runner

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/config"
)

// BenchmarkSchedulerHour is the scheduling loop's own cost, without runs
// (a recording Firer): one simulated hour of 10,000 hourly jobs spread
// over 40 minutes, on a fake clock stepped from timer to timer. It reports
// the loop's wake-ups per hour (each fire minute, plus one every maxSleep
// to notice a stepped wall clock) and the CPU time per fire.
func BenchmarkSchedulerHour(b *testing.B) {
	const n = 10000
	start := time.Date(2026, 6, 1, 12, 0, 30, 0, time.UTC)
	jobs := make([]config.Job, n)
	for i := range jobs {
		jobs[i] = testJob(b, fmt.Sprintf("job-%05d", i), fmt.Sprintf("%d * * * *", 10+i%40), "UTC")
	}
	var wakes, fires int
	for b.Loop() {
		w, f := simulateHour(b, start, jobs)
		wakes, fires = wakes+w, fires+f
	}
	b.ReportMetric(float64(wakes)/float64(b.N), "wakeups/hour")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(fires), "µs/fire")
}

// simulateHour runs the scheduler on jobs for one hour of a fake clock and
// returns how often its timer fired and how many fires it dispatched.
func simulateHour(b *testing.B, start time.Time, jobs []config.Job) (wakes, fires int) {
	fc := clock.NewFake(start)
	rec := newRecorder()
	s := NewScheduler(rec, fc, rec.emit)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	armed := fc.TimerChanged()
	go func() { s.Run(ctx, jobs); close(done) }()
	<-armed
	for {
		d, ok := fc.NextDeadline()
		if !ok || d.After(start.Add(time.Hour)) {
			break
		}
		armed = fc.TimerChanged()
		fc.Set(d)
		select {
		case <-armed:
		case <-time.After(10 * time.Second):
			b.Fatal("scheduler did not re-arm its timer")
		}
		wakes++
	}
	cancel()
	<-done
	s.WaitAll()
	for _, j := range jobs {
		fires += len(rec.firesOf(j.Name))
	}
	return wakes, fires
}
