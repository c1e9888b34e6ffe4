package lock_test

import (
	"os"
	"reflect"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/lock"
)

func TestNewRecord(t *testing.T) {
	t.Parallel()
	since := locktest.SlotAt(0)
	kept := lock.Record{Holder: run.Holder{PID: 7, Host: "h", Job: "j", RunID: "r", Since: since}, Slot: locktest.SlotAt(1), SupervisorPID: 6}
	tests := []struct {
		name string
		req  lock.Record
		want lock.Record
	}{
		{"the caller's fields are kept", kept, kept},
		{"what the backend keeps or Inspect sets is dropped",
			lock.Record{Holder: run.Holder{PID: 7, Host: "h", Job: "j", RunID: "r", Since: since, Foreign: true, Cmdline: "x"},
				Slot: locktest.SlotAt(1), SupervisorPID: 6, Slots: map[string]time.Time{"j": locktest.SlotAt(0)}, InFlight: true, RetryAt: locktest.SlotAt(2)},
			kept},
		{"host and pids default",
			lock.Record{Holder: run.Holder{Job: "j", RunID: "r", Since: since}, Slot: locktest.SlotAt(1)},
			lock.Record{Holder: run.Holder{PID: os.Getpid(), Host: "local", Job: "j", RunID: "r", Since: since}, Slot: locktest.SlotAt(1), SupervisorPID: os.Getpid()}},
		{"the pid defaults to the supervisor's",
			lock.Record{Holder: run.Holder{Job: "j", Since: since}, SupervisorPID: 6},
			lock.Record{Holder: run.Holder{PID: 6, Host: "local", Job: "j", Since: since}, SupervisorPID: 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lock.NewRecord(tt.req, "local"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("NewRecord:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
	if got := lock.NewRecord(lock.Record{}, "local"); got.Since.IsZero() {
		t.Error("NewRecord left Since zero, want now")
	}
}
