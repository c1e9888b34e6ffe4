package ctl

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// streamEvents are one of each kind, with a run output line longer than a
// bufio.Scanner's default limit.
func streamEvents() []WireEvent {
	code := 3
	return []WireEvent{
		{Type: EventRunStarted, Job: "sync", RunID: "r1", Time: ref(0), Slot: ref(-time.Second), StartedAt: ref(0),
			Deadline: ref(time.Minute), Lock: "orders", PID: 4242},
		{Type: EventRunOutput, Job: "sync", RunID: "r1", Time: ref(time.Second), Stream: "stdout", Line: "hello"},
		{Type: EventRunOutput, Job: "sync", RunID: "r1", Time: ref(time.Second), Stream: "stderr", Line: strings.Repeat("x", 200<<10)},
		{Type: EventRunFinished, Job: "sync", RunID: "r1", Time: ref(2 * time.Second), StartedAt: ref(0), PID: 4242,
			Outcome: "failed", ExitCode: &code, Manual: true},
		{Type: EventRunSkipped, Job: "sync", RunID: "r2", Time: ref(3 * time.Second), Outcome: "skipped", Reason: "lock held",
			Holder: &run.Holder{PID: 77, Foreign: true, Cmdline: "flock -n x sleep 9"}},
		{Type: EventConfigReloaded, Time: ref(4 * time.Second), Jobs: 2, Problems: []string{"jobs.yaml:1:1: bad"}},
	}
}

func TestEventStream(t *testing.T) {
	tests := []struct {
		name string
		// end ends the stream one way; cancel is the client's.
		end func(t *testing.T, s *testServer, feed chan WireEvent, cancel context.CancelFunc)
	}{
		{"client cancels", func(_ *testing.T, _ *testServer, _ chan WireEvent, cancel context.CancelFunc) { cancel() }},
		{"daemon shuts down", func(t *testing.T, s *testServer, _ chan WireEvent, _ context.CancelFunc) {
			if err := s.shutdown(); err != nil {
				t.Errorf("Serve: %v", err)
			}
		}},
		{"backend ends the subscription", func(_ *testing.T, _ *testServer, feed chan WireEvent, _ context.CancelFunc) {
			close(feed)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeBackend()
			s := startServer(t, f, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			events, err := s.client.Events(ctx)
			if err != nil {
				t.Fatal(err)
			}
			feed := <-f.subscribed // Events returned: the server has subscribed
			want := streamEvents()
			for _, ev := range want {
				feed <- ev
			}
			for i, w := range want {
				got, ok := recv(t, events)
				if !ok {
					t.Fatalf("stream ended after %d events, want %d", i, len(want))
				}
				if !reflect.DeepEqual(got, w) {
					t.Errorf("event %d:\ngot  %+v\nwant %+v", i, short(got), short(w))
				}
			}
			tt.end(t, s, feed, cancel)
			if ev, ok := recv(t, events); ok {
				t.Fatalf("event %+v after the end, want the channel closed", short(ev))
			}
			select {
			case <-f.unsubscribed:
			case <-time.After(5 * time.Second):
				t.Error("the server did not end its subscription")
			}
		})
	}
}

// recv waits a bounded time for the next event or the channel's close.
func recv(t *testing.T, ch <-chan WireEvent) (WireEvent, bool) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		return ev, ok
	case <-time.After(5 * time.Second):
		t.Fatal("no event and no end of stream within 5s")
		return WireEvent{}, false
	}
}

// short keeps long output lines out of failure messages.
func short(ev WireEvent) WireEvent {
	if len(ev.Line) > 40 {
		ev.Line = ev.Line[:40] + "..."
	}
	return ev
}

func TestEventsStartTimeout(t *testing.T) {
	s := startServer(t, blockingSubscribe{newFakeBackend()}, nil)
	s.client.Timeout = 50 * time.Millisecond
	_, err := s.client.Events(within(t, 5*time.Second))
	if err == nil || !strings.Contains(err.Error(), "did not start within") {
		t.Fatalf("error %v, want the stream's start to time out", err)
	}
}

// blockingSubscribe is a backend whose Subscribe never answers until the
// request is gone, so that the stream never starts.
type blockingSubscribe struct{ *fakeBackend }

func (b blockingSubscribe) Subscribe(ctx context.Context) (<-chan WireEvent, func()) {
	<-ctx.Done()
	return nil, func() {}
}
