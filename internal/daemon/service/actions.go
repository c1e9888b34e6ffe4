package service

import (
	"context"
	"fmt"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
)

// runNowWait bounds how long RunNow waits for its fire to start or skip. A
// manual fire never waits for a lock, so this is only reached when the
// machine is very slow; the answer then says the fire had not decided.
const runNowWait = 3 * time.Second

// RunNow implements ctl.Backend: a manual fire under the job's lock. It
// answers with what the fire did: its run started, or it was skipped (the
// lock is held) or failed, and why. A paused or disabled job is refused
// unless o.Force (see hold).
func (s *Service) RunNow(ctx context.Context, name string, o ctl.FireOptions) (ctl.RunResult, error) {
	return s.fire(ctx, name, true, o)
}

// Trigger implements ctl.Backend: a fire now under the rules of a
// scheduled one, so the job's overlap policy applies; its slot is now,
// and its records say manual, as no schedule owed it. A paused or
// disabled job is refused unless o.Force, as for RunNow. A queued fire is
// answered when it starts or runNowWait passes, whichever is first.
func (s *Service) Trigger(ctx context.Context, name string, o ctl.FireOptions) (ctl.RunResult, error) {
	return s.fire(ctx, name, false, o)
}

// fire starts a fire of the job now and waits for what it did. Every
// operator's fire comes here, from the CLI and the console alike, so one
// rule decides them: a job its pause or enabled: false holds is refused
// unless forced, and a forced answer says what it went past.
func (s *Service) fire(ctx context.Context, name string, manual bool, o ctl.FireOptions) (ctl.RunResult, error) {
	j, err := s.job(name)
	if err != nil {
		return ctl.RunResult{}, err
	}
	now := s.sup.Clock().Now()
	id := run.NewID(now)
	ch := make(chan ctl.RunResult, 1)
	s.mu.Lock()
	if s.daemon.draining {
		s.mu.Unlock()
		return ctl.RunResult{Outcome: "refused", Refused: true, Reason: "the daemon is shutting down: no new runs"}, nil
	}
	hold := s.hold(j)
	if hold != nil && !o.Force {
		s.mu.Unlock()
		return ctl.RunResult{Outcome: "refused", Refused: true, Hold: hold, Reason: hold.String()}, nil
	}
	s.waiting[id] = ch
	s.mu.Unlock()
	s.runs.Go(func() {
		if manual {
			s.sup.FireWithID(s.firing, j, now, true, id) // a manual run goes past a pause in the runner: hold decided it
		} else {
			s.sup.Trigger(s.firing, j, now, id, hold != nil) // recorded manual: no schedule owed it
		}
	})

	ctx, cancel := context.WithTimeout(ctx, runNowWait)
	defer cancel()
	var r ctl.RunResult
	select {
	case r = <-ch:
	case <-ctx.Done():
		s.mu.Lock()
		delete(s.waiting, id)
		s.mu.Unlock()
		r = ctl.RunResult{RunID: id}
	}
	r.Hold, r.Forced = hold, hold != nil
	return r, nil
}

// hold is what stands against an operator's fire of j: its pause, its
// enabled: false; nil when nothing does. s.mu held.
func (s *Service) hold(j config.Job) *ctl.FireHold {
	paused := s.sup.IsPaused(j.Name)
	if !paused && j.Enabled {
		return nil
	}
	return &ctl.FireHold{Paused: paused, PausedBy: s.pausedBy(j.Name), Disabled: !j.Enabled}
}

// answerRunNow tells a waiting RunNow what its fire did, at the fire's
// first event; s.mu held.
func (s *Service) answerRunNow(w ctl.WireEvent) {
	ch := s.waiting[w.RunID]
	if ch == nil {
		return
	}
	r := ctl.RunResult{RunID: w.RunID}
	switch w.Type {
	case ctl.EventRunStarted:
		r.Started = true
	case ctl.EventRunSkipped, ctl.EventRunFinished: // finished without a start: it failed to
		r.Outcome, r.Reason = w.Outcome, w.Reason
	default:
		return
	}
	delete(s.waiting, w.RunID)
	ch <- r // buffered for this one answer
}

// Pause implements ctl.Backend. The pause is saved in the state dir with
// who asked and when; an error says it is in effect but not saved.
func (s *Service) Pause(ctx context.Context, name string) error {
	if _, err := s.job(name); err != nil {
		return err
	}
	s.sup.Pause(name)
	info := pauser(ctx, s.sup.Clock().Now())
	s.mu.Lock()
	if old, ok := s.pauses[name]; ok {
		info = old // paused already: the first pause says since when
	}
	s.pauses[name] = info
	s.broadcast(ctl.WireEvent{Type: ctl.EventJobPaused, Job: name, Time: s.sup.Clock().Now()})
	s.mu.Unlock()
	err := s.savePauses(func(m map[string]ctl.PauseInfo) {
		if _, ok := m[name]; !ok {
			m[name] = info
		}
	})
	if err != nil {
		return fmt.Errorf("paused, but not saved (a restart will resume it): %w", err)
	}
	return nil
}

// Resume implements ctl.Backend.
func (s *Service) Resume(ctx context.Context, name string) error {
	if _, err := s.job(name); err != nil {
		return err
	}
	s.sup.Resume(name)
	s.mu.Lock()
	delete(s.pauses, name)
	s.broadcast(ctl.WireEvent{Type: ctl.EventJobResumed, Job: name, Time: s.sup.Clock().Now()})
	s.mu.Unlock()
	if err := s.savePauses(func(m map[string]ctl.PauseInfo) { delete(m, name) }); err != nil {
		return fmt.Errorf("resumed, but not saved (a restart will pause it again): %w", err)
	}
	return nil
}

// savePauses applies change to the pauses saved in the state dir.
func (s *Service) savePauses(change func(map[string]ctl.PauseInfo)) error {
	dir := s.cfg.Load().StateDir
	if dir == "" {
		return nil // a service without a state dir (tests) keeps pauses in memory
	}
	return updatePauses(dir, change)
}

// restorePauses applies the pauses saved in the state dir.
func (s *Service) restorePauses() error {
	dir := s.cfg.Load().StateDir
	if dir == "" {
		return nil
	}
	m, err := LoadPauses(dir)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, info := range m {
		s.sup.Pause(name)
		s.pauses[name] = info
	}
	return nil
}

// pausedBy is who paused the job, nil when it is not paused; s.mu held.
func (s *Service) pausedBy(name string) *ctl.PauseInfo {
	info, ok := s.pauses[name]
	if !ok || !s.sup.IsPaused(name) {
		return nil
	}
	by := info // on the heap only when paused: a table asks every job
	return &by
}
