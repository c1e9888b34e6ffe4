package service

import (
	"context"

	"cronvisor/internal/ctl"
	"cronvisor/internal/lock/semaphore"
)

// WithSemaphores lists the daemon's resources (jobs.yaml resources:)
// for the control socket's /v1/resources; without it there are none.
func WithSemaphores(sems semaphore.Semaphores) Option { return func(s *Service) { s.sems = sems } }

// Resources implements ctl.Backend: every declared resource, its slots'
// holders and this daemon's waiters.
func (s *Service) Resources(ctx context.Context) ([]ctl.ResourceStatus, error) {
	if s.sems == nil {
		return nil, nil
	}
	rs, err := s.sems.List(ctx)
	if err != nil && len(rs) == 0 {
		return nil, err
	}
	return ResourcesOf(rs), nil
}

// ResourcesOf converts the semaphores' resources to the wire's.
func ResourcesOf(rs []semaphore.Resource) []ctl.ResourceStatus {
	out := make([]ctl.ResourceStatus, 0, len(rs))
	for _, r := range rs {
		st := ctl.ResourceStatus{Resource: r.Name, Size: r.Size, Held: r.HeldCount(),
			Slots: make([]ctl.SlotStatus, len(r.Slots)), Waiters: make([]ctl.WaiterStatus, len(r.Waiters))}
		for i, sl := range r.Slots {
			st.Slots[i] = ctl.SlotStatus{Slot: i, Held: sl.Held}
			if sl.Held {
				l := LockStatusOf(sl)
				st.Slots[i] = ctl.SlotStatus{Slot: i, Held: true, PID: l.PID, Host: l.Host, Job: l.Job, RunID: l.RunID,
					Since: l.Since, Foreign: l.Foreign, Cmdline: l.Cmdline}
			}
		}
		for i, w := range r.Waiters {
			st.Waiters[i] = ctl.WaiterStatus{Job: w.Job, RunID: w.RunID, Host: w.Host, Since: w.Since, Until: w.Until}
		}
		out = append(out, st)
	}
	return out
}

// Waiting is the folded wait of a fire of job for a resource's slot.
func (v daemonView) Waiting(job string) *ctl.Waiting {
	if w := v.folded(job).WaitingFor; w != nil {
		c := *w
		return &c
	}
	return nil
}
