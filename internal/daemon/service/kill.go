package service

import (
	"context"
	"sync"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/store/history"
	"cronvisor/runner"
)

const (
	// killMargin is how long past a run's kill_grace a kill waits for its
	// end: after the SIGKILL come the reap and the durable record, and for
	// an adopted run its keeper's end file and recovery's record, each a
	// sync that a loaded disk makes slow.
	killMargin = 5 * time.Second
	// killPoll is how often a waiting kill looks whether a run ended that
	// no event told it of: an adopted run (its keeper ends it, recovery
	// records it), or a subscription that lagged.
	killPoll = 100 * time.Millisecond
)

// killBook remembers which runs a kill signalled, and when, so that a
// later kill says the run is already being ended and when its SIGKILL
// falls, instead of signalling it again. A mark outlives its run by at
// most one kill of the job: each kill drops the marks of runs gone.
type killBook struct {
	mu   sync.Mutex
	runs map[string]killMark // by run id
}

type killMark struct {
	job        string
	at, killAt time.Time // SIGTERM sent; SIGKILL due
}

// killTarget is a run of the job in flight when the kill came.
type killTarget struct {
	runID   string
	adopted bool
}

// Kill implements ctl.Backend: it ends the job's runs, own and adopted
// (a dead supervisor's, which their keepers go on guarding), the
// retries its slots wait for and its fires waiting for a resource;
// unless o.NoWait, it waits for the runs' end up to their kill_grace and
// killMargin (at most ctl.KillWaitMax),
// and says where each stands then. A run an earlier kill signalled is
// not signalled again: the answer says when its SIGKILL falls, at once.
func (s *Service) Kill(ctx context.Context, name string, o ctl.KillOptions) (ctl.KillResult, error) {
	j, err := s.job(name)
	if err != nil {
		return ctl.KillResult{}, err
	}
	// Subscribed before the signal, so that no end can pass unseen.
	events, unsubscribe := s.Subscribe(ctx)
	defer unsubscribe()
	targets := s.killTargets(ctx, j)
	res := ctl.KillResult{}
	var fresh int
	res.Runs, fresh = s.kills.mark(name, targets, s.sup.Clock().Now(), j.KillGrace)
	if fresh > 0 || len(targets) == 0 {
		// With no run in flight this still ends a slot's retry wait and
		// a fire's wait for a resource.
		k := s.sup.KillJob(name, runner.ErrKilled)
		res.RetriesCancelled, res.WaitsCancelled = k.Retries, k.SlotWaits
	}
	if fresh > 0 && !o.NoWait {
		wait := min(j.KillGrace+killMargin, ctl.KillWaitMax)
		s.awaitEnds(ctx, events, j.Name, res.Runs, wait)
	}
	for i := range res.Runs {
		if !res.Runs[i].Ended {
			s.noteSilent(&res.Runs[i]) // also with NoWait: a keeper that did not answer is told
		}
	}
	res.Now = s.sup.Clock().Now()
	res.Killed = len(res.Runs) + res.RetriesCancelled + res.WaitsCancelled
	return res, nil
}

// killTargets are j's runs in flight: this supervisor's own, and the one
// holding j's lock that recovery adopted from a dead supervisor.
func (s *Service) killTargets(ctx context.Context, j config.Job) []killTarget {
	var out []killTarget
	for _, r := range s.sup.Active() {
		if r.Job == j.Name {
			out = append(out, killTarget{runID: r.RunID})
		}
	}
	if s.adopted == nil || j.Lock == "" {
		return out
	}
	st, err := s.locker.Inspect(ctx, j.Lock)
	if err != nil || !st.Held || st.Record.Job != j.Name {
		return out
	}
	if _, ok := s.adopted(st.Record.RunID); ok {
		out = append(out, killTarget{runID: st.Record.RunID, adopted: true})
	}
	return out
}

// mark notes the targets a kill at now signals, SIGKILL due after grace,
// and returns each as the answer starts it, with how many are signalled
// now rather than by an earlier kill of job. Marks of job's runs that are
// no target any more (ended) are dropped.
func (b *killBook) mark(job string, targets []killTarget, now time.Time, grace time.Duration) ([]ctl.KilledRun, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.runs == nil {
		b.runs = map[string]killMark{}
	}
	live := map[string]bool{}
	out := make([]ctl.KilledRun, 0, len(targets))
	fresh := 0
	for _, t := range targets {
		live[t.runID] = true
		m, already := b.runs[t.runID]
		if !already {
			m = killMark{job: job, at: now, killAt: now.Add(grace)}
			b.runs[t.runID] = m
			fresh++
		}
		out = append(out, ctl.KilledRun{RunID: t.runID, Adopted: t.adopted, SignalledAt: m.at, KillAt: m.killAt, Already: already})
	}
	for id, m := range b.runs {
		if m.job == job && !live[id] {
			delete(b.runs, id)
		}
	}
	return out, fresh
}

// awaitEnds waits up to wait for runs to end, filling in each one's end
// as it comes: its outcome from its run_finished event, or from its
// record. A run has ended once it is no longer in flight (its lock let
// go) and its outcome is known; one gone whose record is not written by
// the end of the wait is answered ended, outcome unknown.
func (s *Service) awaitEnds(ctx context.Context, events <-chan ctl.WireEvent, job string, runs []ctl.KilledRun, wait time.Duration) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	poll := time.NewTicker(killPoll)
	defer poll.Stop()
	gone := map[string]bool{}
	defer func() {
		for i := range runs {
			runs[i].Ended = runs[i].Ended || gone[runs[i].RunID]
		}
	}()
	for !allEnded(runs) {
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		case ev, ok := <-events:
			if !ok {
				events = nil // the stream ended: the polls go on
				continue
			}
			if ev.Type == ctl.EventRunFinished {
				for i := range runs {
					if runs[i].RunID == ev.RunID {
						runs[i].Outcome, runs[i].Reason = ev.Outcome, ev.Reason
					}
				}
				s.pollEnds(ctx, job, runs, gone)
			}
		case <-poll.C:
			s.pollEnds(ctx, job, runs, gone)
		}
	}
}

// pollEnds notes in gone the runs no longer in flight, and marks those
// gone whose outcome is known (from their event or record) ended.
func (s *Service) pollEnds(ctx context.Context, job string, runs []ctl.KilledRun, gone map[string]bool) {
	var active map[string]bool
	for i := range runs {
		r := &runs[i]
		if r.Ended || s.noteSilent(r) {
			continue
		}
		if !gone[r.RunID] {
			if r.Adopted {
				_, going := s.adopted(r.RunID)
				gone[r.RunID] = !going
			} else {
				if active == nil {
					active = s.activeRuns(job)
				}
				gone[r.RunID] = !active[r.RunID]
			}
		}
		if gone[r.RunID] && r.Outcome == "" {
			r.Outcome, r.Reason = s.recordedEnd(ctx, job, r.RunID)
		}
		// Without a store no record will tell the outcome: gone is ended.
		r.Ended = gone[r.RunID] && (r.Outcome != "" || s.store == nil)
	}
}

// activeRuns are the run ids of job's runs in flight here.
func (s *Service) activeRuns(job string) map[string]bool {
	out := map[string]bool{}
	for _, r := range s.sup.Active() {
		if r.Job == job {
			out[r.RunID] = true
		}
	}
	return out
}

// recordedEnd is the outcome and reason of run runID as its record says,
// "" while it is not recorded ended (or there is no store).
func (s *Service) recordedEnd(ctx context.Context, job, runID string) (run.Outcome, string) {
	if s.store == nil {
		return "", ""
	}
	recs, err := s.store.Query(ctx, history.Filter{Job: job, Limit: 20})
	if err != nil {
		return "", ""
	}
	for _, r := range recs {
		if r.RunID == runID && r.Outcome != run.Running {
			return r.Outcome, r.Reason
		}
	}
	return "", ""
}

func allEnded(runs []ctl.KilledRun) bool {
	for _, r := range runs {
		if !r.Ended {
			return false
		}
	}
	return true
}
