package semaphore

import (
	"context"
	"errors"

	"cronvisor/internal/lock"
)

// List is every declared resource, sorted by name: each slot's status
// (Name is the slot's, "db/0"), and the fires waiting for it: this
// process's first first, then those of other hosts sharing the backend
// (announce.go) in the order they began to wait. A slot that cannot be
// inspected is left free-looking with only its name, and its error joined
// to the others; waiters the backend cannot list are this process's only.
func (s *sems) List(ctx context.Context) ([]Resource, error) {
	out := make([]Resource, 0, len(s.names))
	var errs []error
	everywhere, err := s.announcedWaiters(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	for _, name := range s.names {
		r := Resource{Name: name, Size: s.sizes[name], Slots: make([]lock.Status, s.sizes[name])}
		for k := range r.Slots {
			st, err := s.locker.Inspect(ctx, slotLock(name, k))
			if err != nil {
				if ctx.Err() != nil {
					return out, ctx.Err()
				}
				errs = append(errs, err)
			}
			st.Name = SlotName(name, k)
			r.Slots[k] = st
		}
		r.Waiters = mergeWaiters(s.q.waiters(name), everywhere[name])
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}
