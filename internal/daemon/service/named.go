package service

import (
	"context"
	"fmt"
	"slices"
	"time"

	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
)

// jobIndex is a config's jobs by name: with a million jobs, finding the
// few a request names must not walk the list.
type jobIndex struct {
	cfg *config.Config
	at  map[string]int // name -> index in cfg.Jobs; the first of a name, as config.Job
}

func newJobIndex(cfg *config.Config) *jobIndex {
	at := make(map[string]int, len(cfg.Jobs))
	for i, j := range cfg.Jobs {
		if _, dup := at[j.Name]; !dup {
			at[j.Name] = i
		}
	}
	return &jobIndex{cfg: cfg, at: at}
}

// named is the jobs of names that the config has, each once, in the
// config's order.
func (x *jobIndex) named(names []string) []config.Job {
	idx := make([]int, 0, len(names))
	for _, n := range names {
		if i, ok := x.at[n]; ok {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	jobs := make([]config.Job, len(idx))
	for k, i := range idx {
		jobs[k] = x.cfg.Jobs[i]
	}
	return jobs
}

// JobsNamed implements ctl.Backend: the console re-reads the rows it
// shows and the jobs events name, and `status JOB` its jobs, not the
// whole table. It costs what the named jobs cost, whatever the number
// of jobs.
func (s *Service) JobsNamed(ctx context.Context, names []string) ([]ctl.JobStatus, error) {
	jobs := s.index.Load().named(names)
	if len(jobs) == 0 {
		return nil, nil
	}
	return s.statuses(ctx, jobs), nil
}

func (s *Service) job(name string) (config.Job, error) {
	x := s.index.Load()
	if i, ok := x.at[name]; ok {
		return x.cfg.Jobs[i], nil
	}
	return config.Job{}, fmt.Errorf("%w: %q", ctl.ErrUnknownJob, name)
}

// NextFire is the job's next fire alone (see nextFirer).
func (v daemonView) NextFire(job string) (time.Time, bool) {
	if v.s.sched == nil {
		return time.Time{}, false
	}
	return v.s.sched.NextFire(job)
}
