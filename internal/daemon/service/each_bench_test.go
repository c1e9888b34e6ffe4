package service

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"cronvisor/internal/ctl"
)

// BenchmarkStatusOneJob is `status JOB` in the daemon at 100,000
// scheduled jobs: JobsNamed of one job. Its floor in the same run is a
// map lookup of the job's config and one json.Marshal of its status, the
// least a status of one job can cost.
func BenchmarkStatusOneJob(b *testing.B) {
	s := scheduledService(b, 100000)
	ctx := context.Background()
	name := fmt.Sprintf("job-%06d", 50000)
	b.Run("floor", func(b *testing.B) {
		jobs := s.cfg.Load().Jobs
		at := make(map[string]int, len(jobs))
		for i, j := range jobs {
			at[j.Name] = i
		}
		for b.Loop() {
			j := jobs[at[name]]
			if _, err := json.Marshal(ctl.JobStatus{Name: j.Name, Schedule: j.Schedule, Lock: j.Lock}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cronvisor", func(b *testing.B) {
		for b.Loop() {
			st, err := s.JobsNamed(ctx, []string{name})
			if err != nil || len(st) != 1 {
				b.Fatalf("%d statuses, %v", len(st), err)
			}
			if _, err := json.Marshal(st); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStatusAllJobs is `status` of every job at 100,000 scheduled
// jobs as GET /v1/jobs writes it: EachJobs, each status encoded. Its
// floor is the encoding alone of statuses built in advance. B/op is
// what a listing leaves for the collector, which a daemon with a large
// heap lets pile up before it collects.
func BenchmarkStatusAllJobs(b *testing.B) {
	s := scheduledService(b, 100000)
	ctx := context.Background()
	b.Run("floor", func(b *testing.B) {
		all, _ := s.Jobs(ctx)
		enc := json.NewEncoder(io.Discard)
		for b.Loop() {
			for i := range all {
				if err := enc.Encode(&all[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("cronvisor", func(b *testing.B) {
		enc := json.NewEncoder(io.Discard)
		for b.Loop() {
			n := 0
			err := s.EachJobs(ctx, func(part []ctl.JobStatus) error {
				for i := range part {
					if err := enc.Encode(&part[i]); err != nil {
						return err
					}
				}
				n += len(part)
				return nil
			})
			if err != nil || n != 100000 {
				b.Fatalf("%d statuses, %v", n, err)
			}
		}
	})
}
