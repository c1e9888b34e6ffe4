package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestE2EWebhookRetriedUntilAccepted: a daemon's failure notification to
// a target that answers 500, 500, then 200 is sent three times, the same
// body each time, and not again; to a target that always answers 500 it is
// tried four times (the contract's retry policy) and status says it
// failed, with the answer.
func TestE2EWebhookRetriedUntilAccepted(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	accepts, acceptsURL := newReceiver(t, 500, 500)
	refuses, refusesURL := newReceiver(t, 500, 500, 500, 500, 500, 500)
	bodies := func(r *receiver) []string {
		var raw []string
		for _, q := range r.under("/hook") {
			raw = append(raw, q.raw)
		}
		return raw
	}
	at := time.Now().UTC().Add(4 * time.Second)
	s := newSandbox(t, fmt.Sprintf(`shutdown_grace: 1s
defaults:
  timeout: 30s
  timezone: UTC
  schedule: "%s"
  command: echo boom; exit 3
jobs:
  - name: accepted
    notify:
      - {on: [failure], url: %s/hook}
  - name: refused
    notify:
      - {on: [failure], url: %s/hook}
`, firesAt(at), acceptsURL, refusesURL))
	d := s.cv("daemon", "--log-format", "json")
	waitFor(t, 10*time.Second, "daemon start", func() bool { return strings.Contains(d.stderr(), "cronvisor started") })
	// Tries at 0, 1, 3 and 7 s after each run's end (1 s doubling).
	waitFor(t, 20*time.Second, "three tries of one, four of the other", func() bool {
		return len(accepts.under("/hook")) >= 3 && len(refuses.under("/hook")) >= 4
	})
	time.Sleep(2500 * time.Millisecond) // room for a wrong further try
	got, gave := bodies(accepts), bodies(refuses)
	if len(got) != 3 {
		t.Errorf("the accepting target got %d requests, want 3 (500, 500, 200)", len(got))
	}
	if len(gave) != 4 {
		t.Errorf("the refusing target got %d requests, want 4 tries", len(gave))
	}
	for _, bodies := range [][]string{got, gave} {
		for i, b := range bodies {
			if b != bodies[0] {
				t.Errorf("try %d's body differs from the first:\n%s\n%s", i+1, b, bodies[0])
			}
			if !strings.Contains(b, `"event":"failure"`) {
				t.Errorf("try %d is not the failure notification: %s", i+1, b)
			}
		}
	}
	_, status, _ := s.runCV(10*time.Second, "status", "--json")
	for _, want := range []string{`"last_notification":"failure: ok at `, `"last_notification":"failure: failed at `} {
		if !strings.Contains(status, want) {
			t.Errorf("status --json lacks %s:\n%s", want, status)
		}
	}
	if !strings.Contains(status, refusesURL+"/hook: 500 Internal Server Error") {
		t.Errorf("status --json does not name the refusing target and its answer:\n%s", status)
	}
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	if code := d.wait(20 * time.Second); code != 0 {
		t.Errorf("daemon exit %d:\n%s", code, d.stderr())
	}
}
