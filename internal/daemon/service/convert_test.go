package service

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/semaphore"
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

// fakeSems lists canned resources; the rest of the port is not called.
type fakeSems struct {
	semaphore.Semaphores
	list []semaphore.Resource
	err  error
}

func (f fakeSems) List(context.Context) ([]semaphore.Resource, error) { return f.list, f.err }

// TestResources: each slot with its holder (a free slot's last holder is
// not shown as holding it; one outside cronvisor with its command line),
// the held count, and the waiters; a listing
// that failed part way still answers what it read; no semaphores, none.
func TestResources(t *testing.T) {
	h := run.Holder{PID: 42, Host: "h1", Job: "export_a", RunID: "r1", Since: t0.Add(-time.Minute)}
	last := run.Holder{PID: 7, Host: "h2", Job: "old", RunID: "r0", Since: t0.Add(-time.Hour)}
	list := []semaphore.Resource{{Name: "db", Size: 2,
		Slots:   []lock.Status{{Name: "db.0", Held: true, Record: lock.Record{Holder: h}}, {Name: "db.1", Record: lock.Record{Holder: last}}},
		Waiters: []semaphore.Waiter{{Holder: run.Holder{Host: "h1", Job: "patient", RunID: "p1", Since: t0}, Resource: "db", Until: t0.Add(time.Minute)}}},
		{Name: "disk", Size: 1, Slots: []lock.Status{{Name: "disk.0", Held: true, Record: lock.Record{Holder: run.Holder{PID: 9, Host: "h1",
			Foreign: true, Cmdline: "flock -n disk.0.lock sleep 3"}}}}}}
	want := []ctl.ResourceStatus{{Resource: "db", Size: 2, Held: 1,
		Slots:   []ctl.SlotStatus{{Slot: 0, Held: true, PID: 42, Host: "h1", Job: "export_a", RunID: "r1", Since: h.Since}, {Slot: 1}},
		Waiters: []ctl.WaiterStatus{{Job: "patient", RunID: "p1", Host: "h1", Since: t0, Until: t0.Add(time.Minute)}}},
		{Resource: "disk", Size: 1, Held: 1, Slots: []ctl.SlotStatus{{Slot: 0, Held: true, PID: 9, Host: "h1", Foreign: true,
			Cmdline: "flock -n disk.0.lock sleep 3"}}, Waiters: []ctl.WaiterStatus{}}}
	ctx := context.Background()
	tests := []struct {
		name    string
		sems    semaphore.Semaphores
		want    []ctl.ResourceStatus
		wantErr bool
	}{
		{"listed", fakeSems{list: list}, want, false},
		{"part read", fakeSems{list: list, err: errors.New("redis: timeout")}, want, false},
		{"failed", fakeSems{err: errors.New("redis: timeout")}, nil, true},
		{"no resources", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []Option
			if tt.sems != nil {
				opts = append(opts, WithSemaphores(tt.sems))
			}
			s := &Service{}
			for _, o := range opts {
				o(s)
			}
			got, err := s.Resources(ctx)
			if (err != nil) != tt.wantErr || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, %v\nwant %+v (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
