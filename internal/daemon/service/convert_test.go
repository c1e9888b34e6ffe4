package service

import (
	"reflect"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
	"cronvisor/internal/lock"
)

func TestLockStatusOf(t *testing.T) {
	tests := []struct {
		name string
		s    lock.Status
		want ctl.LockStatus
	}{
		{"held by cronvisor", lock.Status{Name: "orders", Held: true, Record: lock.Record{Holder: run.Holder{PID: 42, Host: "h1", Job: "sync", RunID: "r1", Since: ref(time.Second)}, Slot: ref(0), SupervisorPID: 40}},
			ctl.LockStatus{Lock: "orders", Held: true, PID: 42, Host: "h1", Job: "sync", RunID: "r1", Slot: ref(0),
				Since: ref(time.Second), SupervisorPID: 40}},
		{"held by flock(1)", lock.Status{Name: "x", Held: true, Record: lock.Record{Holder: run.Holder{PID: 7, Foreign: true, Cmdline: "flock -n x"}}},
			ctl.LockStatus{Lock: "x", Held: true, PID: 7, Foreign: true, Cmdline: "flock -n x"}},
		{"free", lock.Status{Name: "y"}, ctl.LockStatus{Lock: "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LockStatusOf(tt.s); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// ref is a fixed reference time, in UTC as the wire has it.
func ref(offset time.Duration) time.Time {
	return time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC).Add(offset)
}
