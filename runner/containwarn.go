package runner

// containmentWarn is the run's proc.Spec.Warn: what proc finds of the
// run's containment (a process that left the run's cgroup leaf, a leaf
// left behind) goes to the supervisor's log as a warning naming the job
// and the run.
func (s *Supervisor) containmentWarn(f *fire) func(msg string, args ...any) {
	job, runID := f.job.Name, f.runID
	return func(msg string, args ...any) {
		s.log.Warn(msg, append([]any{"job", job, "run_id", runID}, args...)...)
	}
}
