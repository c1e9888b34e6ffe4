package service

import (
	"context"
	"errors"

	"cronvisor/internal/store/history"
	"cronvisor/runner"
)

// Option gives a Service one of its optional dependencies, at New: none
// can be changed once it serves.
type Option func(*Service)

// WithScheduler reports the scheduler's next fires and stalls in the
// statuses; without it they are empty.
func WithScheduler(sched *runner.Scheduler) Option { return func(s *Service) { s.sched = sched } }

// WithStore answers history queries from store; without it History
// answers that history is unavailable.
func WithStore(store *history.Store) Option { return func(s *Service) { s.store = store } }

// WithRecent seeds each job's state from what history held at start-up.
func WithRecent(recent StoredRuns) Option { return func(s *Service) { s.seed(recent) } }

// WithReload is what Reload does: re-read jobs.yaml and return its
// problems as an error. Without it Reload fails with errNoReload.
func WithReload(f func(context.Context) error) Option { return func(s *Service) { s.reload = f } }

// WithAlerts supplies JobStatus.LastNotification and FailedPing.
func WithAlerts(f func(job string) (notification, failedPing string)) Option {
	return func(s *Service) { s.alerts = f }
}

// WithHistoryHealth supplies JobStatus.History ("" while history works).
func WithHistoryHealth(f func() string) Option { return func(s *Service) { s.health = f } }

// WithAdopted supplies which runs holding a job's lock are adopted (a
// dead supervisor's, watched by recovery), and that supervisor's pid.
func WithAdopted(f func(runID string) (supervisorPID int, ok bool)) Option {
	return func(s *Service) { s.adopted = f }
}

// errNoReload is Reload's answer from a service given no WithReload.
var errNoReload = errors.New("this supervisor cannot reload jobs.yaml")

func noReload(context.Context) error { return errNoReload }

// WithDurations supplies JobStatus.Durations, the figures learned from
// each job's successful runs.
func WithDurations(f LearnedDurations) Option { return func(s *Service) { s.durations = f } }
