package lock

import (
	"os"
	"reflect"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

func TestNewRecord(t *testing.T) {
	t.Parallel()
	since := slotAt(0)
	kept := Record{Holder: run.Holder{PID: 7, Host: "h", Job: "j", RunID: "r", Since: since}, Slot: slotAt(1), SupervisorPID: 6}
	tests := []struct {
		name string
		req  Record
		want Record
	}{
		{"the caller's fields are kept", kept, kept},
		{"what the backend keeps or Inspect sets is dropped",
			Record{Holder: run.Holder{PID: 7, Host: "h", Job: "j", RunID: "r", Since: since, Foreign: true, Cmdline: "x"},
				Slot: slotAt(1), SupervisorPID: 6, Slots: map[string]time.Time{"j": slotAt(0)}, InFlight: true, RetryAt: slotAt(2)},
			kept},
		{"host and pids default",
			Record{Holder: run.Holder{Job: "j", RunID: "r", Since: since}, Slot: slotAt(1)},
			Record{Holder: run.Holder{PID: os.Getpid(), Host: "local", Job: "j", RunID: "r", Since: since}, Slot: slotAt(1), SupervisorPID: os.Getpid()}},
		{"the pid defaults to the supervisor's",
			Record{Holder: run.Holder{Job: "j", Since: since}, SupervisorPID: 6},
			Record{Holder: run.Holder{PID: 6, Host: "local", Job: "j", Since: since}, SupervisorPID: 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := newRecord(tt.req, "local"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("newRecord:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
	if got := newRecord(Record{}, "local"); got.Since.IsZero() {
		t.Error("newRecord left Since zero, want now")
	}
}
