package history

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// BenchmarkStartupQueries is what a supervisor starting with many jobs
// asks the store: every job's last slot (catch_up) and newest outcome and
// start (the status it shows), one query per job against the batched
// Summaries. Jobs: 10,000, or CRONVISOR_BENCH_ROWS/3 when that is smaller;
// three rows each.
func BenchmarkStartupQueries(b *testing.B) {
	n := min(10000, max(benchRows(b)/3, 1))
	s := openSync(b, synchronousMode)
	jobs := fillJobs(b, s, n, 3)
	ctx := context.Background()
	cases := []struct {
		name string
		run  func() (int, error)
	}{
		{"LastSlot-per-job", func() (int, error) {
			found := 0
			for _, j := range jobs {
				t, err := s.LastSlot(ctx, j)
				if err != nil {
					return 0, err
				}
				if !t.IsZero() {
					found++
				}
			}
			return found, nil
		}},
		{"Query-per-job", func() (int, error) {
			found := 0
			for _, j := range jobs {
				rs, err := s.Query(ctx, Filter{Job: j, Limit: 1})
				if err != nil {
					return 0, err
				}
				found += len(rs)
			}
			return found, nil
		}},
		{"Summaries", func() (int, error) { m, err := s.Summaries(ctx, jobs); return len(m), err }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				got, err := c.run()
				if err != nil {
					b.Fatal(err)
				}
				if got != n {
					b.Fatalf("found %d jobs, want %d", got, n)
				}
			}
			b.ReportMetric(float64(n), "jobs")
		})
	}
}

// fillJobs writes rows records for each of n jobs in one transaction and
// returns the job names.
func fillJobs(b *testing.B, s *Store, n, rows int) []string {
	ctx := context.Background()
	tx, err := s.h.Load().db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, insertSQL)
	if err != nil {
		b.Fatal(err)
	}
	jobs := make([]string, n)
	for i := range jobs {
		jobs[i] = fmt.Sprintf("job-%05d", i)
		for k := range rows {
			slot := base().Add(-time.Duration(k) * time.Hour)
			r := run.Record{Job: jobs[i], RunID: jobs[i] + "-" + strconv.Itoa(k), Outcome: run.OK,
				ScheduledAt: slot, StartedAt: slot, EndedAt: slot.Add(time.Second), ExitCode: intp(0), Host: "h"}
			if _, err := stmt.ExecContext(ctx, args(r)...); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return jobs
}

// BenchmarkRecordSchedules is a first start-up's record of 10,000 jobs'
// schedules into a store that held none, each iteration on a store of
// its own.
func BenchmarkRecordSchedules(b *testing.B) {
	const n = 10000
	vs := make([]run.ScheduleVersion, n)
	for i := range vs {
		vs[i] = run.ScheduleVersion{Job: fmt.Sprintf("job-%05d", i), Schedule: strconv.Itoa(i%60) + " * * * *",
			Zone: "Local", Enabled: true}
	}
	ctx := context.Background()
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for b.Loop() {
		b.StopTimer()
		s, _ := openTemp(b)
		b.StartTimer()
		got, err := s.RecordSchedules(ctx, at, "host-a", vs)
		if err != nil || len(got) != n {
			b.Fatalf("recorded %d, %v; want %d", len(got), err, n)
		}
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(n, "jobs")
}
