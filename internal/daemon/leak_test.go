package daemon

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"

	"cronvisor/internal/base/statedir"
	"cronvisor/internal/ctl"
)

// TestShutdownLeavesNoGoroutine starts a daemon with its real parts (file
// locks, history, control socket, watcher, reaper, real clock), runs a job
// through the socket with a console's event stream open, shuts down in
// the middle of the run and checks that every goroutine the daemon
// started has returned.
func TestShutdownLeavesNoGoroutine(t *testing.T) {
	before := goleak.IgnoreCurrent()
	h := newHarness(t, `jobs:
  - name: nap
    schedule: "@every 1h"
    command: ["sleep", "0.5"]
    timeout: 1m
`)
	opts := Options{ConfigPath: h.path, Log: slog.New(traceHandler{h.tr})}
	d, err := New(h.load(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runCtx, stopRun := context.WithCancel(ctx)
	returned := make(chan struct{})
	go func() { defer close(returned); d.Run(runCtx, nil) }()

	client, err := ctl.Dial(statedir.Dir(h.load().StateDir).Socket())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	events, err := client.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := client.RunNow(ctx, "nap", ctl.FireOptions{})
	if err != nil || !r.Started {
		t.Fatalf("RunNow: %+v, %v", r, err)
	}
	stopRun()
	<-returned
	stopped := make(chan struct{})
	go func() { defer close(stopped); d.Shutdown(nil) }()

	// The socket is served through the drain: the event stream sees the
	// run end, and then ends itself.
	finished := false
	for ev := range events {
		if ev.Type == ctl.EventRunFinished && ev.RunID == r.RunID {
			finished = true
		}
	}
	if !finished {
		t.Error("the event stream ended before the run in flight finished")
	}
	<-stopped
	if fin := h.tr.logged("run finished"); len(fin) != 1 || fin[0]["outcome"] != "ok" {
		t.Errorf("run finished records: %v, want one ok", fin)
	}
	client.Close()
	goleak.VerifyNone(t, before)
}
