package service

import (
	"context"

	"cronvisor/internal/ctl"
)

// EachJobs implements ctl.JobStreamer: every job's status, given to yield
// a part of inspectUpTo jobs at a time, so that the answer to a table of
// a million jobs is written while it is built rather than held whole,
// and leaves little for the collector: the part's slice is reused, yield
// must not keep it.
// The locks are listed once for the whole table; each part is seen at
// one moment, the table as a whole is not. It stops at the first error
// of yield, or when ctx ends (the client went away).
func (s *Service) EachJobs(ctx context.Context, yield func([]ctl.JobStatus) error) error {
	jobs := s.cfg.Load().Jobs
	if len(jobs) <= inspectUpTo {
		return yield(s.statuses(ctx, jobs))
	}
	held := Statuses{Locks: s.locker}.held(ctx, jobs)
	buf := make([]ctl.JobStatus, 0, inspectUpTo)
	for from := 0; from < len(jobs); from += inspectUpTo {
		if err := ctx.Err(); err != nil {
			return err
		}
		part := jobs[from:min(from+inspectUpTo, len(jobs))]
		buf = s.appendStatuses(ctx, buf[:0], part, held)
		if err := yield(buf); err != nil {
			return err
		}
	}
	return nil
}
