package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/semaphore"
)

// WithSemaphores gives fires the slots of the resources their jobs use
// (jobs.yaml resources: and uses:). Without it a job that uses any is
// not started, and its record says why.
func WithSemaphores(sems semaphore.Semaphores) Option {
	return func(s *Supervisor) { s.sems = sems }
}

// WithHandoffCombiner is how a run's keeper gets its lock's lease and its
// Redis slots' leases as one hand-off (backends.CombineHandoffs). Without
// it a run holding more than one such lease is ended at once if this
// supervisor dies, as a lease nothing of the run holds is (Tethered).
func WithHandoffCombiner(combine func(hs ...[]byte) []byte) Option {
	return func(s *Supervisor) { s.combine = combine }
}

// errNoSemaphores refuses a fire of a job that uses resources in a
// supervisor given none (WithSemaphores).
var errNoSemaphores = errors.New("this supervisor has no resources")

// withSlots takes the slots of the resources f's job uses, after its
// lock (overlap allow: without one) and before its attempts, which keep
// them: a full resource releases the lock and skips the fire, or, with
// on_full: wait, waits for a slot first (never a manual fire). Slots are
// released just before the lock (releaseSlots), after the end is
// recorded; the deferred release only catches a way that did not.
func (s *Supervisor) withSlots(next runFunc) runFunc {
	return func(ctx context.Context, f *fire) (end run.End) {
		if len(f.job.Uses) == 0 {
			return next(ctx, f)
		}
		if err := s.takeSlots(ctx, f); err != nil {
			return s.noSlots(f, err)
		}
		defer func() {
			if !end.Detached { // a run handed over keeps its slots
				s.releaseSlots(f)
			}
		}()
		return next(ctx, f)
	}
}

// takeSlots takes f's slots into f.held, waiting for a full resource
// when f's job says so, with run.Waiting told first.
func (s *Supervisor) takeSlots(ctx context.Context, f *fire) error {
	if s.sems == nil {
		return errNoSemaphores
	}
	req := semaphore.Request{
		Holder: run.Holder{PID: s.pid, Host: s.host, Job: f.job.Name, RunID: f.runID, Since: s.clock.Now()},
		Uses:   make([]semaphore.Use, len(f.job.Uses)),
	}
	for i, u := range f.job.Uses {
		req.Uses[i] = semaphore.Use{Resource: u.Resource, Weight: u.Weight}
	}
	held, err := s.sems.Take(ctx, req)
	var full *semaphore.FullError
	if errors.As(err, &full) && f.job.OnFull == config.OnFullWait && !f.exempt() {
		began := s.clock.Now()
		until := began.Add(f.job.MaxWait)
		held, err = s.waitSlots(ctx, f, req, run.Waiting{Job: f.job.Name, RunID: f.runID, Slot: f.slot, Time: began,
			Resource: full.Resource, Held: len(full.Holders), Size: full.Size, Until: until})
		f.resourceWait = s.clock.Now().Sub(began)
	}
	f.held = held
	return err
}

// waitSlots is the wait of takeSlots, told as waiting, and registered
// first so that a kill of the job that reads it ends it: then the error
// is a *killedWaiting.
func (s *Supervisor) waitSlots(ctx context.Context, f *fire, req semaphore.Request, waiting run.Waiting) (*semaphore.Held, error) {
	wctx, cancel := context.WithCancelCause(ctx)
	w := &retryWait{job: f.job.Name, ctx: wctx, cancel: cancel, forSlots: true}
	s.mu.Lock()
	s.waits[w] = true
	s.mu.Unlock()
	s.emit(waiting)
	defer func() {
		cancel(nil)
		s.mu.Lock()
		delete(s.waits, w)
		s.mu.Unlock()
	}()
	held, err := s.sems.Wait(wctx, req, waiting.Until)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(wctx), ErrKilled) {
		return nil, &killedWaiting{resource: waiting.Resource}
	}
	return held, err
}

// killedWaiting is a fire an operator's kill ended while it waited for
// a slot of resource.
type killedWaiting struct{ resource string }

func (e *killedWaiting) Error() string {
	return "killed by operator while waiting for " + e.resource
}

// noSlots records a fire that did not get its slots, after releasing
// its lock: a full resource is a skip (resource_full, its holders in
// the reason); a stop or an unreachable backend is the skip a lock's
// would be; anything else is an error, as a refused admission is.
func (s *Supervisor) noSlots(f *fire, err error) run.End {
	var reason string
	var class run.Class
	var full *semaphore.FullError
	var killed *killedWaiting
	switch {
	case errors.As(err, &full):
		reason, class, f.fullResource = err.Error(), run.ClassResourceFull, full.Resource
	case errors.As(err, &killed):
		reason, class = err.Error(), run.ClassKilled
	case errors.Is(err, context.Canceled):
		reason, class = "supervisor stopping", run.ClassDropped
	case errors.Is(err, lock.ErrUnavailable):
		reason, class = "resource backend unreachable ("+err.Error()+")", run.ClassBackendUnreachable
	default:
		return s.notAdmitted(f, fmt.Errorf("cannot take resource slots: %w", err))
	}
	end := f.end()
	end.Outcome = run.Skipped
	s.releaseUnrun(f, end)
	return s.skip(f, reason, class, nil)
}

// releaseUnrun releases the lock of a fire that did not start, telling
// its ledger end's outcome: no end of a run is to wait for.
func (s *Supervisor) releaseUnrun(f *fire, end run.End) {
	s.releaseSlots(f)
	if f.grant.Lease != nil {
		s.setOutcome(f.grant.Lease, end)
		_ = f.grant.Release()
	}
}

// releaseSlots lets go of f's slots, once: just before its lock is.
func (s *Supervisor) releaseSlots(f *fire) {
	if f.held == nil {
		return
	}
	if err := s.sems.Release(f.held); err != nil && !errors.Is(err, lock.ErrReleased) {
		s.log.Warn("releasing a run's resource slots", "run_id", f.runID, "slots", f.held.Slots, "err", err)
	}
	f.held = nil
}

// slotsStarted names the run (a retry's run id) and its process in its
// slots' records, and
// returns the slots and the wait the run's Start reports (the wait once:
// a retry did not wait).
func (s *Supervisor) slotsStarted(f *fire, pid int) (slots []string, waited time.Duration) {
	if f.held == nil {
		return nil, 0
	}
	if err := s.sems.SetRun(f.held, f.runID, pid); err != nil {
		s.log.Warn("naming the run's process in its resource slots", "run_id", f.runID, "err", err)
	}
	waited, f.resourceWait = f.resourceWait, 0
	return f.held.Slots, waited
}

// slotsEnv is CRONVISOR_RESOURCES: f's slots, space separated.
func slotsEnv(f *fire) string {
	if f.held == nil {
		return ""
	}
	return strings.Join(f.held.Slots, " ")
}

// grants are the leases f's run holds: its lock's (zero for overlap
// allow) and its slots'.
func (f *fire) grants() []lock.Grant {
	gs := []lock.Grant{f.grant}
	if f.held != nil {
		gs = append(gs, f.held.Grants...)
	}
	return gs
}

// keeperLease is the lock's grant as the run's keeper takes it, with
// the slots' leases folded in: one hand-off of every Redis lease
// (combined), the shortest life left, and Tethered when any lease is one
// or the hand-offs cannot be combined.
func (s *Supervisor) keeperLease(f *fire) lock.Grant {
	g := f.grant
	if f.held == nil {
		return g
	}
	var hs [][]byte
	if g.Handoff != nil {
		hs = append(hs, g.Handoff)
	}
	for _, sg := range f.held.Grants {
		if sg.Handoff != nil {
			hs = append(hs, sg.Handoff)
		}
		if sg.Handoff != nil || sg.Tethered {
			g.MinLifeLeft = minLife(g.MinLifeLeft, sg.MinLifeLeft)
		}
		g.Tethered = g.Tethered || sg.Tethered
	}
	switch {
	case len(hs) == 1:
		g.Handoff = hs[0]
	case len(hs) > 1 && s.combine != nil:
		g.Handoff = s.combine(hs...)
	case len(hs) > 1:
		g.Handoff, g.Tethered = nil, true
	}
	return g
}

// minLife is the shorter of two lives left, zero meaning none known.
func minLife(a, b time.Duration) time.Duration {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}
