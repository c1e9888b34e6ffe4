package daemon

import (
	"context"
	"testing"
	"time"

	"cronvisor/internal/ctl"
)

// stopOrder is what Shutdown stops, in order: firing, then the runs, then
// the state dir's guard (which may bind the socket again), the socket (served through the drain), housekeeping and the watcher,
// then what Open wired, the last opened first: the outlog queue, Recovery
// before the history writer and the store it writes, the reaper, the lock
// backend last.
var stopOrder = []string{
	"stopped scheduler", "stopped runs", "stopped state dir guard", "closed listener", "stopped socket", "stopped housekeeping",
	"stopped watcher", "stopped outlog", "stopped skip log", "stopped notifications", "stopped recovery", "stopped resources", "stopped history writer", "stopped history",
	"stopped reaper", "closed locker", "stopped locker",
}

func TestShutdownOrder(t *testing.T) {
	h := newHarness(t, oneJob)
	d := h.start()
	h.run(d, nil)
	r, err := d.Service().RunNow(context.Background(), "nap", ctl.FireOptions{})
	if err != nil || !r.Started {
		t.Fatalf("RunNow: %+v, %v", r, err)
	}
	d.Shutdown(nil)
	equalSteps(t, "shutdown", h.tr.prefixed("stopped ", "closed "), stopOrder)
	// The run that was in flight finished by itself within the grace.
	fin := h.tr.logged("run finished")
	if len(fin) != 1 || fin[0]["outcome"] != "ok" {
		t.Errorf("run finished records: %v, want one ok", fin)
	}
	if got := h.tr.logged("cronvisor stopped"); len(got) != 1 {
		t.Errorf("stop records: %v, want one", got)
	}
	d.Shutdown(nil) // a second call does nothing
	if got := h.tr.logged("cronvisor stopped"); len(got) != 1 {
		t.Errorf("stop records after a second Shutdown: %v, want one", got)
	}
}

const longJob = `shutdown_grace: 10s
jobs:
  - name: long
    schedule: "@every 1h"
    command: ["sleep", "30"]
    timeout: 1m
`

func TestShutdownGrace(t *testing.T) {
	h := newHarness(t, longJob)
	d := h.start()
	r, err := d.Service().RunNow(context.Background(), "long", ctl.FireOptions{})
	if err != nil || !r.Started {
		t.Fatalf("RunNow: %+v, %v", r, err)
	}
	done := make(chan struct{})
	go func() { d.Shutdown(nil); close(done) }()
	waitTimer(t, h.clock, 10*time.Second) // shutdown_grace's
	select {
	case <-done:
		t.Fatal("Shutdown returned before shutdown_grace passed, with the run in flight")
	default:
	}
	h.clock.Advance(10 * time.Second)
	<-done
	if got := h.tr.logged("shutdown_grace exceeded; ending running jobs like a timeout"); len(got) != 1 {
		t.Errorf("grace records: %v, want one", got)
	}
	fin := h.tr.logged("run finished")
	if len(fin) != 1 || fin[0]["outcome"] != "interrupted" {
		t.Errorf("run finished records: %v, want one interrupted", fin)
	}
	equalSteps(t, "shutdown", h.tr.prefixed("stopped ", "closed "), stopOrder)
}

func TestShutdownNow(t *testing.T) {
	h := newHarness(t, longJob)
	d := h.start()
	r, err := d.Service().RunNow(context.Background(), "long", ctl.FireOptions{})
	if err != nil || !r.Started {
		t.Fatalf("RunNow: %+v, %v", r, err)
	}
	d.Shutdown(context.Canceled) // no grace: the fake clock is never advanced
	fin := h.tr.logged("run finished")
	if len(fin) != 1 || fin[0]["outcome"] != "interrupted" {
		t.Errorf("run finished records: %v, want one interrupted", fin)
	}
	equalSteps(t, "shutdown", h.tr.prefixed("stopped ", "closed "), stopOrder)
}

// waitTimer waits until the code under test makes a timer of d on c.
func waitTimer(t *testing.T, c spyClock, d time.Duration) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-c.made:
			if got == d {
				return
			}
		case <-deadline:
			t.Fatalf("no timer of %v within 10 s", d)
		}
	}
}
