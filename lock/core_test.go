package lock

import (
	"os"
	"reflect"
	"testing"
	"time"

	"cronvisor/internal/redistest"
	"cronvisor/run"
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

// A Redis record does not outlive its lease, so it never says a run is
// in flight or waits for a retry, whatever the request carried.
func TestRedisRecordNeverInFlight(t *testing.T) {
	srv := redistest.New(t)
	ctx := testCtx(t, 10*time.Second)
	l := newRedisLocker(t, srv.URL(), 5*time.Second)
	req := redisReq("sync", "run-a", "host-a", slotAt(1))
	req.Record.InFlight, req.Record.RetryAt = true, slotAt(2)
	mustAcquire(ctx, t, l, req)
	st, err := l.Inspect(ctx, req.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Held || st.Record.RunID != "run-a" || st.Record.InFlight || !st.Record.RetryAt.IsZero() {
		t.Fatalf("Inspect: %+v, want held by run-a, not in flight, no retry", st)
	}
}
