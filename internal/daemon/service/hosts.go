package service

import (
	"context"
	"fmt"

	"cronvisor/internal/ctl"
)

// HostsFunc reads the fleet's hosts from the shared history's server.
type HostsFunc func(ctx context.Context) ([]ctl.HostStatus, error)

// WithHosts serves GET /v1/hosts from f, the hosts of the fleet whose
// history this daemon shares; self is this host's name. Without it the
// daemon's history is its own, and it knows no other host.
func WithHosts(self string, f HostsFunc) Option {
	return func(s *Service) { s.self, s.hosts = self, f }
}

// Hosts implements ctl.Backend. The read is bounded as the shared
// history's other reads are; a server that does not answer is an error,
// not an empty fleet.
func (s *Service) Hosts(ctx context.Context) (ctl.Hosts, error) {
	if s.hosts == nil {
		return ctl.Hosts{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, sharedWait)
	defer cancel()
	hosts, err := s.hosts(ctx)
	if err != nil {
		return ctl.Hosts{}, fmt.Errorf("the shared history's hosts: %w", err)
	}
	return ctl.Hosts{Shared: true, Self: s.self, Hosts: hosts}, nil
}
