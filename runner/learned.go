package runner

import (
	"context"
	"time"

	"cronvisor/internal/base/durations"
	"cronvisor/internal/config"
)

// WithLearner has the supervisor judge its runs by what its job's runs
// took: warn_after: auto marks a run slow at the bound l learned, and
// every end the supervisor tells teaches l and is judged for warn_fast.
func WithLearner(l *durations.Learner) Option { return func(s *Supervisor) { s.learner = l } }

// slowAfter is how long a run of job goes before it is slow, and the
// words that say where that came from; 0 when it is never slow: off, or
// warn_after: auto before the job has enough runs.
func (s *Supervisor) slowAfter(ctx context.Context, job *config.Job) (time.Duration, string) {
	if job.WarnFastLearned && s.learner != nil {
		// Read now, before the run, rather than by its end with the lock
		// held; later runs find it in memory.
		_ = s.learner.Warm(ctx, job.Name)
	}
	if !job.WarnAfterLearned {
		return job.WarnAfter, "warn_after is " + job.WarnAfter.String()
	}
	if s.learner == nil {
		return 0, ""
	}
	bound, basis, ok := s.learner.SlowBound(ctx, job.Name)
	if !ok {
		return 0, ""
	}
	return bound, basis
}
