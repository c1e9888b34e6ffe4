package recovery

import (
	"context"
	"errors"

	"cronvisor/internal/lock"
)

// Locker returns the lock backend with every record it reads reported to
// r: the previous holder a fire's acquisition found, the holder that
// refused a fire, the records Inspect and List return. A fire that finds
// a dead supervisor's run, holding the lock or just gone, so starts its
// recovery at once. Grants pass through unchanged; the report costs the
// fire a few comparisons, and never blocks it.
func (r *Recoverer) Locker() lock.Locker { return observed{Locker: r.cfg.Locker, r: r} }

type observed struct {
	lock.Locker
	r *Recoverer
}

func (o observed) Acquire(ctx context.Context, req lock.Request) (lock.Grant, error) {
	g, err := o.Locker.Acquire(ctx, req)
	var held *lock.HeldError
	var done *lock.SlotDoneError
	switch {
	case err == nil:
		if g.Previous != nil {
			o.r.saw(req.Name, *g.Previous)
		}
	case errors.As(err, &held):
		o.r.saw(req.Name, held.Record)
	case errors.As(err, &done):
		o.r.saw(req.Name, done.Record)
	}
	return g, err
}

func (o observed) Inspect(ctx context.Context, name string) (lock.Status, error) {
	st, err := o.Locker.Inspect(ctx, name)
	if err == nil {
		o.r.saw(name, st.Record)
	}
	return st, err
}

func (o observed) List(ctx context.Context) ([]lock.Status, error) {
	sts, err := o.Locker.List(ctx)
	for _, st := range sts {
		o.r.saw(st.Name, st.Record)
	}
	return sts, err
}

// ListIsPartial passes on whether the wrapped backend's List may miss held
// locks (lock.PartialLister), so that the daemon Inspects the others.
func (o observed) ListIsPartial() bool {
	p, ok := o.Locker.(lock.PartialLister)
	return ok && p.ListIsPartial()
}

// saw hands a record to the Recoverer's goroutine if it may name a dead
// supervisor's run; a full queue drops it (the periodic Sweep finds it).
func (r *Recoverer) saw(lockName string, h lock.Record) {
	if !r.candidate(h) {
		return
	}
	select {
	case r.seen <- sighting{lock: lockName, holder: h}:
	default:
	}
}
