package service

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"cronvisor/internal/ctl"
)

// Hosts is empty and not shared for a daemon whose history is its own;
// with a shared history it is the fleet's hosts, and a server that does
// not answer is an error, never an empty fleet.
func TestHosts(t *testing.T) {
	fleet := []ctl.HostStatus{{Host: "web-1", State: "up", Version: "1.4.0", PID: 10, Running: []ctl.HostRun{{Job: "a", RunID: "r1"}}}}
	down := errors.New("connection refused")
	tests := []struct {
		name    string
		opts    []Option
		want    ctl.Hosts
		wantErr error
	}{
		{"own history", nil, ctl.Hosts{}, nil},
		{"shared", []Option{WithHosts("web-1", func(context.Context) ([]ctl.HostStatus, error) { return fleet, nil })},
			ctl.Hosts{Shared: true, Self: "web-1", Hosts: fleet}, nil},
		{"server down", []Option{WithHosts("web-1", func(context.Context) ([]ctl.HostStatus, error) { return nil, down })},
			ctl.Hosts{}, down},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newTestService(t)
			for _, o := range tc.opts {
				o(s)
			}
			got, err := s.Hosts(context.Background())
			if !errors.Is(err, tc.wantErr) || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Hosts = %+v, %v; want %+v, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
