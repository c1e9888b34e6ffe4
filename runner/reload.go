package runner

import (
	"container/heap"
	"context"
	"reflect"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
)

// Reload replaces the job list. A job whose definition is unchanged keeps
// its heap entry: its slot, its jitter and a fire that is due. Runs in
// flight finish under the definition they started with.
func (s *Scheduler) Reload(ctx context.Context, jobs []config.Job) {
	select {
	case s.reload <- jobs:
	case <-ctx.Done():
	}
}

// apply makes the heap hold jobs, touching only the jobs that changed.
func (s *Scheduler) apply(ctx context.Context, h *entryHeap, byName map[string]*entry, jobs []config.Job) {
	now := s.clock.Now()
	keep := make(map[string]bool, len(jobs))
	for i := range jobs {
		j := &jobs[i]
		keep[j.Name] = true
		switch old := byName[j.Name]; {
		case old == nil:
			s.add(ctx, h, byName, j, now, nil)
		case sameDefinition(*old.job, *j):
			old.job = j
		default:
			s.redefine(ctx, h, byName, old, j, now)
		}
	}
	for name, e := range byName {
		if !keep[name] {
			if pending(e, now) {
				s.recordDropped(e, now, "not run: a reload removed the job between this slot and its jittered start")
			}
			s.remove(h, byName, e)
		}
	}
}

// redefine gives a changed job's entry its new definition. The next fire
// stays where it was when the new definition still has its slot, and keeps
// its jittered instant unless the jitter changed; else both are computed
// afresh.
//
// A pending fire (its slot passed, its jittered start not yet) is owed, and
// runs under the new definition, as a Kubernetes CronJob's due schedule
// runs with the spec current when the controller creates the Job. When the
// new schedule has no such slot, the fire is recorded as not run rather
// than dropped without a word, so that every fire keeps its one record.
func (s *Scheduler) redefine(ctx context.Context, h *entryHeap, byName map[string]*entry, e *entry, j *config.Job, now time.Time) {
	slot := e.slot
	if !pending(e, now) {
		slot = time.Time{}
		if j.Sched != nil {
			slot = j.Sched.Next(now)
		}
	}
	if slot.IsZero() || !slot.Equal(e.slot) || !isSlot(j, slot) {
		if pending(e, now) {
			s.recordDropped(e, now, "not run: a reload changed the schedule between this slot and its jittered start, and the new one has no fire at this slot")
		}
		s.remove(h, byName, e)
		s.add(ctx, h, byName, j, now, nil)
		return
	}
	jitter := e.job.Jitter
	e.job = j
	if j.Jitter != jitter {
		// The delay is drawn anew for the new jitter, as every other host
		// and a restart draw it; a pending fire whose new instant passed
		// runs at once.
		if e.due = e.slot.Add(s.delay(j, e.slot)); e.due.Before(now) {
			e.due = now
		}
	}
	heap.Fix(h, e.index)
	s.publish(e)
}

// pending reports whether e's slot has passed while its fire has not
// happened yet: it waits for its jittered start.
func pending(e *entry, now time.Time) bool {
	return !e.slot.IsZero() && !e.slot.After(now)
}

// isSlot reports whether t is one of j's fire times.
func isSlot(j *config.Job, t time.Time) bool {
	return j.Sched != nil && j.Sched.Next(t.Add(-time.Nanosecond)).Equal(t)
}

func (s *Scheduler) remove(h *entryHeap, byName map[string]*entry, e *entry) {
	heap.Remove(h, e.index)
	delete(byName, e.job.Name)
	s.unpublish(e.job.Name)
}

// recordDropped records the pending fire of e as not run, for reason.
func (s *Scheduler) recordDropped(e *entry, now time.Time, reason string) {
	s.firer.Skip(run.Skip{Job: e.job.Name, RunID: run.NewID(now), Slot: e.slot, Time: now, Reason: reason, Class: run.ClassDropped})
}

// sameDefinition tells whether a reload changed nothing about how a job
// runs. config.Job holds no source positions, so an edit elsewhere in the
// file leaves it equal. Sched is parsed from Schedule in Location, and
// each load has its own Location values (whose caches depend on when they
// were loaded): the zone is compared by name.
func sameDefinition(a, b config.Job) bool {
	if a.Location.String() != b.Location.String() {
		return false
	}
	a.Sched, b.Sched = nil, nil
	a.Location, b.Location = nil, nil
	return reflect.DeepEqual(a, b)
}
