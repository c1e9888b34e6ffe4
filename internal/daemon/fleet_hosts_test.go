package daemon

import (
	"reflect"
	"testing"
	"time"

	"cronvisor/internal/ctl"
	"cronvisor/internal/store/fleet"
)

// A fleet host reads on the wire as `status --fleet --json` prints it.
func TestHostStatus(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	h := fleet.Host{Name: "web-2", Version: "1.4.0", PID: 77, Started: t0.Add(-time.Hour), LastBeat: t0,
		Silent: 1500 * time.Millisecond, Offset: -20 * time.Millisecond, State: fleet.HostLost,
		Running: []fleet.RunningRun{{Job: "sync", RunID: "r9", Started: t0.Add(-time.Minute)}}}
	want := ctl.HostStatus{Host: "web-2", State: "lost", Version: "1.4.0", PID: 77, StartedAt: t0.Add(-time.Hour),
		LastBeat: t0, SilentMS: 1500, ClockOffsetMS: -20,
		Running: []ctl.HostRun{{Job: "sync", RunID: "r9", StartedAt: t0.Add(-time.Minute)}}}
	if got := hostStatus(h); !reflect.DeepEqual(got, want) {
		t.Errorf("hostStatus = %+v\nwant %+v", got, want)
	}
	if got := hostStatus(fleet.Host{Name: "idle"}); got.Running == nil {
		t.Error("a host without runs has a nil Running; the wire wants []")
	}
}
