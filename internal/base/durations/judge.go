package durations

import (
	"context"
	"fmt"
	"time"

	"cronvisor/internal/base/run"
)

// Ended learns from e, a run's end told once by the end path, and judges
// it: an ok run under the job's fast rule's bound returns the run.Fast to
// tell after e. The bound is judged on the window before e joins it. A
// job whose fast rule is off is read from the source only when something
// asked for its figures before; until then its ends are in the store,
// where that first read finds them.
func (l *Learner) Ended(ctx context.Context, e run.End) (run.Fast, bool) {
	if e.Outcome != run.OK || e.Started.IsZero() || e.Ended.Before(e.Started) || e.Detached || e.Amends {
		return run.Fast{}, false
	}
	s := Sample{RunID: e.RunID, Took: e.Ended.Sub(e.Started), Ended: e.Ended}
	rule := l.fastRule(e.Job)
	var fast run.Fast
	var isFast bool
	if rule.On() {
		fast, isFast = l.judgeFast(ctx, e, s.Took, rule)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch w := l.jobs[e.Job]; {
	case w == nil && l.cfg.Source == nil: // nothing else to learn from
		w = &window{loaded: true}
		w.push(s)
		l.jobs[e.Job] = w
	case w == nil: // never asked for, or no run yet: the store has it
	case !w.loaded:
		w.pending = append(w.pending, s)
	default:
		w.push(s)
	}
	return fast, isFast
}

// judgeFast returns the run.Fast of e, which took took, under rule.
func (l *Learner) judgeFast(ctx context.Context, e run.End, took time.Duration, rule FastRule) (run.Fast, bool) {
	bound, basis := rule.Below, fmt.Sprintf("warn_fast is %s", rule.Below)
	if rule.Learned {
		st, err := l.Stats(ctx, e.Job)
		var ok bool
		if bound, basis, ok = FastBound(st); err != nil || !ok {
			return run.Fast{}, false
		}
	}
	if took >= bound {
		return run.Fast{}, false
	}
	return run.Fast{Job: e.Job, RunID: e.RunID, Slot: e.Slot, Started: e.Started, Ended: e.Ended,
		Took: took, Bound: bound, Attempt: e.Attempt, Manual: e.Manual,
		Reason: fmt.Sprintf("ended ok in %s; %s", Round(took), basis)}, true
}

// SlowBound is the learned bound of job's runs (warn_after: auto) and the
// words that say where it came from; ok is false until the job has
// MinSamples successful runs in its window (or its history cannot be
// read: no bound is better than a wrong one).
func (l *Learner) SlowBound(ctx context.Context, job string) (bound time.Duration, basis string, ok bool) {
	st, err := l.Stats(ctx, job)
	if err != nil {
		return 0, "", false
	}
	return SlowBound(st)
}
