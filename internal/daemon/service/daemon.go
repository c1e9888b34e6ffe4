package service

import (
	"context"
	"os"
	"slices"
	"time"

	"cronvisor/internal/ctl"
)

// daemonState is what the service tells about the daemon as a whole.
type daemonState struct {
	draining  bool
	refused   []string // the last reload's problems while an older file is in effect
	refusedAt time.Time
}

// reloaded notes a reload's result: a refused file's problems stay until
// a good file loads.
func (d *daemonState) reloaded(w ctl.WireEvent) {
	if len(w.Problems) == 0 {
		d.refused, d.refusedAt = nil, time.Time{}
		return
	}
	d.refused, d.refusedAt = slices.Clone(w.Problems), w.Time
}

// Daemon implements ctl.Backend.
func (s *Service) Daemon(context.Context) (ctl.DaemonStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ctl.DaemonStatus{PID: os.Getpid(), StartedAt: s.started,
		ShuttingDown: s.daemon.draining, Finishing: s.runningLocked(),
		Refused: slices.Clone(s.daemon.refused), RefusedAt: s.daemon.refusedAt,
		Containment: s.sup.Containment()}, nil
}

// Drain says that the daemon stopped firing and waits for its runs: run
// now is refused from here on, and every subscriber hears how many runs
// are finishing.
func (s *Service) Drain() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.daemon.draining = true
	s.stopFiring()
	s.broadcast(ctl.WireEvent{Type: ctl.EventShuttingDown, Time: time.Now(), Jobs: s.runningLocked()})
}

// runningLocked counts the runs in flight; s.mu held.
func (s *Service) runningLocked() int {
	n := 0
	for _, st := range s.jobs {
		n += len(st.inFlight)
	}
	return n
}
