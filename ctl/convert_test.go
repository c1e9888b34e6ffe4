package ctl

import (
	"reflect"
	"testing"
	"time"

	"cronvisor/lock"
	"cronvisor/run"
	"cronvisor/runner"
)

func TestEventOf(t *testing.T) {
	code := 0
	holder := lock.Record{Holder: run.Holder{PID: 77, Host: "h2", Job: "other", RunID: "r9", Since: ref(-time.Minute)}, SupervisorPID: 70}
	tests := []struct {
		name   string
		ev     runner.Event
		want   WireEvent
		wantOK bool
	}{
		{"started", runner.RunStarted{Job: "sync", RunID: "r1", Slot: ref(-time.Second), Started: ref(0),
			Deadline: ref(time.Minute), PID: 42, Lock: "orders", Manual: true},
			WireEvent{Type: EventRunStarted, Job: "sync", RunID: "r1", Time: ref(0), Slot: ref(-time.Second),
				StartedAt: ref(0), Deadline: ref(time.Minute), PID: 42, Lock: "orders", Manual: true}, true},
		{"output", runner.RunOutput{Job: "sync", RunID: "r1", Time: ref(time.Second), Stream: "stderr", Line: "oops"},
			WireEvent{Type: EventRunOutput, Job: "sync", RunID: "r1", Time: ref(time.Second), Stream: "stderr", Line: "oops"}, true},
		{"finished", runner.RunFinished{Job: "sync", RunID: "r1", Slot: ref(-time.Second), Started: ref(0), Ended: ref(time.Hour),
			PID: 42, Outcome: run.OK, ExitCode: &code, Reason: "", Manual: false},
			WireEvent{Type: EventRunFinished, Job: "sync", RunID: "r1", Time: ref(time.Hour), Slot: ref(-time.Second),
				StartedAt: ref(0), PID: 42, Outcome: "ok", ExitCode: &code}, true},
		{"skipped with holder", runner.RunSkipped{Job: "sync", RunID: "r2", Slot: ref(0), Time: ref(0), Reason: "lock held", Holder: &holder.Holder},
			WireEvent{Type: EventRunSkipped, Job: "sync", RunID: "r2", Time: ref(0), Slot: ref(0), Outcome: "skipped",
				Reason: "lock held", Holder: &run.Holder{PID: 77, Host: "h2", Job: "other", RunID: "r9", Since: ref(-time.Minute)}}, true},
		{"reload refused", runner.ConfigReloaded{Time: ref(0), Jobs: 3, Problems: []string{"a:1:1: x", "a:2:1: y"}},
			WireEvent{Type: EventConfigReloaded, Time: ref(0), Jobs: 3, Problems: []string{"a:1:1: x", "a:2:1: y"},
				Reason: "a:1:1: x; a:2:1: y"}, true},
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

type unknownEvent struct{}

func (unknownEvent) JobName() string { return "" }
func (unknownEvent) At() time.Time   { return time.Time{} }

func TestLockStatusOf(t *testing.T) {
	tests := []struct {
		name string
		s    lock.Status
		want LockStatus
	}{
		{"held by cronvisor", lock.Status{Name: "orders", Held: true, Record: lock.Record{Holder: run.Holder{PID: 42, Host: "h1", Job: "sync", RunID: "r1", Since: ref(time.Second)}, Slot: ref(0), SupervisorPID: 40}},
			LockStatus{Lock: "orders", Held: true, PID: 42, Host: "h1", Job: "sync", RunID: "r1", Slot: ref(0),
				Since: ref(time.Second), SupervisorPID: 40}},
		{"held by flock(1)", lock.Status{Name: "x", Held: true, Record: lock.Record{Holder: run.Holder{PID: 7, Foreign: true, Cmdline: "flock -n x"}}},
			LockStatus{Lock: "x", Held: true, PID: 7, Foreign: true, Cmdline: "flock -n x"}},
		{"free", lock.Status{Name: "y"}, LockStatus{Lock: "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LockStatusOf(tt.s); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
