package notify

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
)

// hook is a local webhook receiver that keeps every request it got.
type hook struct {
	mu     sync.Mutex
	bodies []map[string]any
	paths  []string
	answer func(n int) int // status for the n-th request (1-based)
	got    chan struct{}
}

func newHook(t *testing.T, answer func(int) int) (*hook, *httptest.Server) {
	h := &hook{answer: answer, got: make(chan struct{}, 100)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		if m == nil {
			m = map[string]any{"raw": string(b)}
		}
		h.mu.Lock()
		h.bodies = append(h.bodies, m)
		h.paths = append(h.paths, r.URL.RequestURI())
		n := len(h.bodies)
		h.mu.Unlock()
		code := 200
		if h.answer != nil {
			code = h.answer(n)
		}
		w.WriteHeader(code)
		h.got <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	return h, srv
}

func (h *hook) requests() ([]map[string]any, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), h.bodies...), append([]string(nil), h.paths...)
}

var testPolicy = Policy{Timeout: 2 * time.Second, Tries: 4, Backoff: 10 * time.Millisecond, Queue: 16}

func newTestNotifier(job config.Job, opts ...Option) *Notifier {
	opts = append([]Option{WithPolicy(testPolicy), WithHost("web1")}, opts...)
	return New(func(name string) (config.Job, bool) { return job, name == job.Name },
		slog.New(slog.NewTextHandler(io.Discard, nil)), opts...)
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func ran(runID string, at time.Time, outcome run.Outcome, code int) []run.Event {
	return []run.Event{
		run.Start{Job: "a", RunID: runID, Slot: at, Started: at, Attempt: 1},
		run.Output{Job: "a", RunID: runID, Time: at, Stream: "stdout", Line: "line of " + runID},
		run.End{Job: "a", RunID: runID, Slot: at, Started: at, Ended: at.Add(1500 * time.Millisecond),
			Outcome: outcome, ExitCode: &code, Attempt: 1},
	}
}

func TestEventsEachNotifyOnce(t *testing.T) {
	h, srv := newHook(t, nil)
	job := config.Job{Name: "a", Notify: []config.Target{{
		On:  config.EventFailure | config.EventTimeout | config.EventSkip | config.EventRecovered | config.EventSlow | config.EventMissed,
		URL: srv.URL + "/hook", AfterSkips: 3}}}
	n := newTestNotifier(job)
	var evs []run.Event
	evs = append(evs, ran("r1", t0, run.Failed, 3)...)
	evs = append(evs, ran("r2", t0.Add(time.Minute), run.Timeout, -1)...)
	holder := &run.Holder{PID: 42, Host: "web1", Job: "a", RunID: "r2"}
	for i := range 4 { // the fourth skip of the streak pages nobody again
		evs = append(evs, run.Skip{Job: "a", RunID: "s" + itoa(i), Slot: t0.Add(time.Duration(2+i) * time.Minute),
			Time: t0.Add(time.Duration(2+i) * time.Minute), Reason: "lock held", Class: run.ClassLockHeld, Holder: holder})
	}
	evs = append(evs, run.Skip{Job: "a", RunID: "m1", Slot: t0, Time: t0, Reason: "missed: woke late", Class: run.ClassMissed})
	evs = append(evs, run.Slow{Job: "a", RunID: "r3", Slot: t0.Add(9 * time.Minute), Started: t0.Add(9 * time.Minute),
		Time: t0.Add(10 * time.Minute), After: time.Minute, Attempt: 1})
	evs = append(evs, ran("r3", t0.Add(9*time.Minute), run.OK, 0)...)
	evs = append(evs, ran("r4", t0.Add(11*time.Minute), run.OK, 0)...) // ok again: no second recovered
	for _, ev := range evs {
		n.Handle(ev)
	}
	n.Close(5 * time.Second)
	bodies, _ := h.requests()
	type want struct {
		event, runID, outcome string
		failures              float64
	}
	wants := []want{
		{"failure", "r1", "failed", 1},
		{"timeout", "r2", "timeout", 2},
		{"skip", "s2", "skipped", 2},
		{"missed", "m1", "skipped", 2},
		{"slow", "r3", "running", 2},
		{"recovered", "r3", "ok", 2},
	}
	if len(bodies) != len(wants) {
		t.Fatalf("got %d notifications, want %d: %v", len(bodies), len(wants), bodies)
	}
	for i, w := range wants {
		b := bodies[i]
		if b["event"] != w.event || b["run_id"] != w.runID || b["outcome"] != w.outcome || b["consecutive_failures"] != w.failures {
			t.Errorf("notification %d = %v, want %+v", i, b, w)
		}
	}
	fields := []string{"event", "job", "run_id", "host", "outcome", "exit_code", "reason", "holder", "scheduled_at",
		"started_at", "ended_at", "duration_ms", "attempt", "consecutive_failures", "output_tail"}
	for _, f := range fields {
		if _, ok := bodies[0][f]; !ok {
			t.Errorf("body lacks %q: %v", f, bodies[0])
		}
	}
	if b := bodies[0]; b["exit_code"] != 3.0 || b["duration_ms"] != 1500.0 || b["output_tail"] != "line of r1\n" || b["host"] != "web1" || b["attempt"] != 1.0 {
		t.Errorf("failure body = %v", b)
	}
	if hm, _ := bodies[2]["holder"].(map[string]any); hm["pid"] != 42.0 || hm["run_id"] != "r2" {
		t.Errorf("skip holder = %v", bodies[2]["holder"])
	}
}

func TestDeliveryRetriesAfterServerErrors(t *testing.T) {
	h, srv := newHook(t, func(n int) int {
		if n <= 2 {
			return 500
		}
		return 200
	})
	var mu sync.Mutex
	results := map[string]int{}
	job := config.Job{Name: "a", Notify: []config.Target{{On: config.EventFailure, URL: srv.URL}}}
	n := newTestNotifier(job, WithCounter(func(kind, result string) { mu.Lock(); results[kind+"/"+result]++; mu.Unlock() }))
	for _, ev := range ran("r1", t0, run.Failed, 1) {
		n.Handle(ev)
	}
	n.Close(5 * time.Second)
	if bodies, _ := h.requests(); len(bodies) != 3 {
		t.Errorf("target got %d requests, want 3", len(bodies))
	}
	if results["webhook/ok"] != 1 || len(results) != 1 {
		t.Errorf("results = %v, want one webhook/ok", results)
	}
	if last, ok := n.LastNotification("a"); !ok || last.Result != ResultOK || last.Event != "failure" {
		t.Errorf("LastNotification = %+v %v", last, ok)
	}
}

func TestSilentTargetBlocksNothing(t *testing.T) {
	stall := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-stall }))
	defer srv.Close()
	defer close(stall)
	var mu sync.Mutex
	results := map[string]int{}
	job := config.Job{Name: "a", Notify: []config.Target{{On: config.EventFailure | config.EventStart, URL: srv.URL}}}
	n := newTestNotifier(job, WithCounter(func(kind, result string) { mu.Lock(); results[result]++; mu.Unlock() }))
	start := time.Now()
	for i := range 100 { // far more than the queue holds
		for _, ev := range ran("r"+itoa(i), t0, run.Failed, 1) {
			n.Handle(ev)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("200 events took %v with a silent target", d)
	}
	closeStart := time.Now()
	n.Close(200 * time.Millisecond)
	if d := time.Since(closeStart); d > 3*time.Second {
		t.Errorf("Close took %v, want about its 200ms flush bound", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if results[ResultDropped] != 200 {
		t.Errorf("results = %v, want all 200 dropped (queue full or flush over)", results)
	}
}

func TestPingsInOrderPerRun(t *testing.T) {
	h, srv := newHook(t, nil)
	job := config.Job{Name: "a", Ping: srv.URL + "/uuid", PingSkips: true}
	n := newTestNotifier(job)
	// Two overlapping runs (overlap: allow), then a skip.
	r1, r2 := ran("r1", t0, run.OK, 0), ran("r2", t0, run.Failed, 7)
	for _, ev := range []run.Event{r1[0], r2[0], r2[1], r1[1], r2[2], r1[2],
		run.Skip{Job: "a", RunID: "s1", Slot: t0, Time: t0, Reason: "lock held", Class: run.ClassLockHeld},
		run.End{Job: "a", RunID: "r5", Slot: t0, Started: t0, Ended: t0, Outcome: run.Failed, ExitCode: new(int), Attempt: 1, Retrying: true}} {
		n.Handle(ev)
	}
	n.Close(5 * time.Second)
	bodies, paths := h.requests()
	want := []string{"/uuid/start?rid=r1", "/uuid/start?rid=r2", "/uuid/7?rid=r2", "/uuid?rid=r1", "/uuid/fail?rid=s1", "/uuid/log?rid=r5"}
	if len(paths) != len(want) {
		t.Fatalf("pings %v, want %v", paths, want)
	}
	for i := range want {
		if paths[i] != want[i] {
			t.Errorf("ping %d = %s, want %s", i, paths[i], want[i])
		}
	}
	if bodies[2]["raw"] != "line of r2\n" || bodies[4]["raw"] != "lock held" {
		t.Errorf("ping bodies = %v", bodies)
	}
}

func TestCommandTargetGetsEnvAndTail(t *testing.T) {
	out := t.TempDir() + "/got"
	job := config.Job{Name: "a", Notify: []config.Target{{On: config.EventFailure,
		Command: []string{"/bin/sh", "-c", `{ echo "$CRONVISOR_EVENT $CRONVISOR_JOB $CRONVISOR_RUN_ID $CRONVISOR_EXIT_CODE $CRONVISOR_CONSECUTIVE_FAILURES"; cat; } > ` + out}}}}
	n := newTestNotifier(job)
	for _, ev := range ran("r1", t0, run.Failed, 5) {
		n.Handle(ev)
	}
	n.Close(5 * time.Second)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "failure a r1 5 1\nline of r1\n"; string(b) != want {
		t.Errorf("command saw %q, want %q", b, want)
	}
}

func TestFailedPingIsKept(t *testing.T) {
	_, srv := newHook(t, func(int) int { return 500 })
	job := config.Job{Name: "a", Ping: srv.URL}
	n := newTestNotifier(job)
	for _, ev := range ran("r1", t0, run.OK, 0) {
		n.Handle(ev)
	}
	n.Close(5 * time.Second)
	last, ok := n.FailedPing("a")
	if !ok || last.Result != ResultFailed || last.Event != "success" || !strings.Contains(last.Err, "500") {
		t.Errorf("FailedPing = %+v %v, want the success ping failed with 500", last, ok)
	}
	if _, ping := n.Describe("a"); !strings.HasPrefix(ping, "success: failed at ") {
		t.Errorf("Describe ping = %q", ping)
	}
}
