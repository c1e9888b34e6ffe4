package ctl

import (
	"reflect"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

func TestEventOf(t *testing.T) {
	code := 0
	holder := run.Holder{PID: 77, Host: "h2", Job: "other", RunID: "r9", Since: ref(-time.Minute)}
	tests := []struct {
		name   string
		ev     run.Event
		want   WireEvent
		wantOK bool
	}{
		{"started", run.Start{Job: "sync", RunID: "r1", Slot: ref(-time.Second), Started: ref(0),
			Deadline: ref(time.Minute), PID: 42, Lock: "orders", Manual: true},
			WireEvent{Type: EventRunStarted, Job: "sync", RunID: "r1", Time: ref(0), Slot: ref(-time.Second),
				StartedAt: ref(0), Deadline: ref(time.Minute), PID: 42, Lock: "orders", Manual: true}, true},
		{"output", run.Output{Job: "sync", RunID: "r1", Time: ref(time.Second), Stream: "stderr", Line: "oops"},
			WireEvent{Type: EventRunOutput, Job: "sync", RunID: "r1", Time: ref(time.Second), Stream: "stderr", Line: "oops"}, true},
		{"finished", run.End{Job: "sync", RunID: "r1", Slot: ref(-time.Second), Started: ref(0), Ended: ref(time.Hour),
			PID: 42, Outcome: run.OK, ExitCode: &code, Reason: "", Manual: false},
			WireEvent{Type: EventRunFinished, Job: "sync", RunID: "r1", Time: ref(time.Hour), Slot: ref(-time.Second),
				StartedAt: ref(0), PID: 42, Outcome: "ok", ExitCode: &code}, true},
		{"finished, measured", run.End{Job: "sync", RunID: "r1", Started: ref(0), Ended: ref(time.Hour), PID: 42, Outcome: run.Failed,
			Usage: run.Usage{Measured: true, CPUUser: 520 * time.Millisecond, CPUSystem: 30 * time.Millisecond, MemoryPeak: 4096, OOMKilled: true}},
			WireEvent{Type: EventRunFinished, Job: "sync", RunID: "r1", Time: ref(time.Hour), StartedAt: ref(0), PID: 42, Outcome: "failed",
				Usage: &WireUsage{CPUUserMS: 520, CPUSystemMS: 30, MemoryPeakBytes: 4096, OOMKilled: true}}, true},
		{"skipped with holder", run.Skip{Job: "sync", RunID: "r2", Slot: ref(0), Time: ref(0), Reason: "lock held", Holder: &holder},
			WireEvent{Type: EventRunSkipped, Job: "sync", RunID: "r2", Time: ref(0), Slot: ref(0), Outcome: "skipped",
				Reason: "lock held", Holder: &run.Holder{PID: 77, Host: "h2", Job: "other", RunID: "r9", Since: ref(-time.Minute)}}, true},
		{"waiting", run.Waiting{Job: "sync", RunID: "r4", Slot: ref(0), Time: ref(time.Second), Resource: "db", Held: 2, Size: 2,
			Until: ref(time.Minute)},
			WireEvent{Type: EventRunWaiting, Job: "sync", RunID: "r4", Time: ref(time.Second), Slot: ref(0),
				Resource: "db", Held: 2, Size: 2, Until: ref(time.Minute)}, true},
		{"started with slots", run.Start{Job: "sync", RunID: "r4", Started: ref(0), Resources: []string{"db/1"}, ResourceWait: time.Second},
			WireEvent{Type: EventRunStarted, Job: "sync", RunID: "r4", Time: ref(0), StartedAt: ref(0), Resources: []string{"db/1"}}, true},
		{"skipped, resource full", run.Skip{Job: "sync", RunID: "r5", Time: ref(0), Reason: "resource db full",
			Class: run.ClassResourceFull, Resource: "db"},
			WireEvent{Type: EventRunSkipped, Job: "sync", RunID: "r5", Time: ref(0), Outcome: "skipped",
				Reason: "resource db full", Resource: "db"}, true},
		{"reload refused", run.Reload{Time: ref(0), Jobs: 3, Problems: []string{"a:1:1: x", "a:2:1: y"}},
			WireEvent{Type: EventConfigReloaded, Time: ref(0), Jobs: 3, Problems: []string{"a:1:1: x", "a:2:1: y"},
				Reason: "a:1:1: x; a:2:1: y"}, true},
		// A peer's closing of a lost host's run ends that run on the wire,
		// at the end its record has (the host's last heartbeat).
		{"host lost", run.HostLost{Job: "sync", RunID: "r3", Host: "h2", Slot: ref(-time.Minute), Started: ref(-time.Minute),
			Ended: ref(-time.Second), Time: ref(0), Reason: "host lost: x", Attempt: 1},
			WireEvent{Type: EventHostLost, Job: "sync", RunID: "r3", Time: ref(-time.Second), Slot: ref(-time.Minute),
				StartedAt: ref(-time.Minute), Outcome: run.Interrupted, Reason: "host lost: x", Attempt: 1, Host: "h2"}, true},
		{"host lost, no estimate", run.HostLost{Job: "sync", RunID: "r3", Host: "h2", Time: ref(0), Reason: "host lost: x"},
			WireEvent{Type: EventHostLost, Job: "sync", RunID: "r3", Time: ref(0), Outcome: run.Interrupted,
				Reason: "host lost: x", Host: "h2"}, true},
		{"finished, retrying", run.End{Job: "sync", RunID: "r1", Started: ref(0), Ended: ref(time.Second), Outcome: run.Failed,
			Attempt: 1, Retrying: true, RetryAt: ref(11 * time.Second)},
			WireEvent{Type: EventRunFinished, Job: "sync", RunID: "r1", Time: ref(time.Second), StartedAt: ref(0),
				Outcome: run.Failed, Attempt: 1, Retrying: true, RetryAt: ref(11 * time.Second)}, true},
		{"unknown event type", unknownEvent{}, WireEvent{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := EventOf(tt.ev)
			if ok != tt.wantOK || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, %v\nwant %+v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// TestWireUsage: a run's cost crosses the wire and reads back to the
// millisecond; an unmeasured run's has none.
func TestWireUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		u    run.Usage
		want run.Usage
	}{
		{"not measured", run.Usage{}, run.Usage{}},
		{"measured", run.Usage{Measured: true, CPUUser: 520300 * time.Microsecond, MemoryPeak: 1 << 20},
			run.Usage{Measured: true, CPUUser: 520 * time.Millisecond, MemoryPeak: 1 << 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := WireUsageOf(tc.u).Usage(); got != tc.want {
				t.Errorf("read back %+v, want %+v", got, tc.want)
			}
		})
	}
}

type unknownEvent struct{}

func (unknownEvent) JobName() string { return "" }
func (unknownEvent) At() time.Time   { return time.Time{} }
