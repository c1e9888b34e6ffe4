package notify

import (
	"os"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
)

func hostLostEvent() run.HostLost {
	return run.HostLost{Job: "a", RunID: "r9", Host: "web2", Slot: t0, Started: t0.Add(time.Second),
		Ended: t0.Add(31 * time.Second), Time: t0.Add(34 * time.Second), Attempt: 1,
		Reason: "host lost: no heartbeat from web2 since 2026-03-01T12:00:31.000Z; closed by web1"}
}

// A run a peer closed notifies host_lost once per target that asks for
// it, naming the lost host, and closes the job's ping.
func TestHostLostNotifies(t *testing.T) {
	h, srv := newHook(t, nil)
	out := t.TempDir() + "/got"
	job := config.Job{Name: "a", Ping: srv.URL + "/uuid", Notify: []config.Target{
		{On: config.EventHostLost, URL: srv.URL + "/hook"},
		{On: config.EventFailure | config.EventTimeout, URL: srv.URL + "/other"}, // not asked: nothing
		{On: config.EventHostLost, Command: []string{"/bin/sh", "-c",
			`echo "$CRONVISOR_EVENT $CRONVISOR_HOST $CRONVISOR_OUTCOME $CRONVISOR_RUN_ID $CRONVISOR_DURATION_MS" > ` + out}},
	}}
	n := newTestNotifier(job)
	n.Handle(hostLostEvent())
	n.Close(5 * time.Second)
	bodies, paths := h.requests()
	if len(bodies) != 2 {
		t.Fatalf("requests %v, want the ping and one webhook", paths)
	}
	var hook map[string]any
	for i, p := range paths {
		switch p {
		case "/hook":
			hook = bodies[i]
		case "/uuid/fail?rid=r9":
		default:
			t.Errorf("unexpected request %s", p)
		}
	}
	want := map[string]any{"event": "host_lost", "job": "a", "run_id": "r9", "host": "web2", "outcome": "interrupted",
		"reason": hostLostEvent().Reason, "scheduled_at": "2026-03-01T12:00:00Z", "started_at": "2026-03-01T12:00:01Z",
		"ended_at": "2026-03-01T12:00:31Z", "duration_ms": 30000.0, "attempt": 1.0, "exit_code": nil, "holder": nil}
	for k, v := range want {
		if hook[k] != v {
			t.Errorf("webhook %s = %v, want %v", k, hook[k], v)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got, w := string(b), "host_lost web2 interrupted r9 30000\n"; got != w {
		t.Errorf("command saw %q, want %q", got, w)
	}
}

// host_lost is an event of on: lists like the others.
func TestHostLostEventName(t *testing.T) {
	if got := config.EventName(config.EventHostLost); got != "host_lost" {
		t.Errorf("EventName(EventHostLost) = %q", got)
	}
}
