package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// TestE2EFleetMissedOnce: two hosts on one PostgreSQL lock backend, both
// down across a few slots of an `@every 2s` job. The first back records
// the passed slots as one `missed` skip and notifies it; the second,
// back after it, records and notifies nothing more for them.
func TestE2EFleetMissedOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("a 15-second scenario of two daemons")
	}
	t.Parallel()
	srv := sharedSQLServer(t, "postgres")
	db, _ := srv.newDB(t)
	hook, url := newReceiver(t)
	jobs := fmt.Sprintf(`metrics: {listen: "127.0.0.1:0"}
jobs:
  - name: tick
    schedule: "@every 2s"
    command: "true"
    timeout: 10s
    notify: [{on: [missed], url: %q}]
`, url)
	hosts := []*sandbox{sqlSandbox(t, srv, db, jobs), sqlSandbox(t, srv, db, jobs)}
	names := []string{"host-a", "host-b"}
	start := func(i int) *proc { return hosts[i].startHost(names[i]) }
	missedOf := func(s *sandbox) []run.Record {
		var out []run.Record
		for _, r := range s.historyJSON() {
			if strings.HasPrefix(r.Reason, "missed") {
				out = append(out, r)
			}
		}
		return out
	}
	a, b := start(0), start(1)
	time.Sleep(4 * time.Second) // a couple of slots, run once by the two
	stopDaemons(t, a, b)
	down := time.Now()
	midSlot(5 * time.Second) // two or three slots pass with every host down
	a = start(0)
	waitFor(t, 10*time.Second, "host-a's missed notification", func() bool { return len(hook.under("/")) >= 1 })
	// The missed record took the one path of every end: counted once, by
	// the host that recorded it.
	metrics := "http://" + metricsAddrLog.FindStringSubmatch(a.stderr())[1] + "/metrics"
	if got := httpGet(t, metrics); !strings.Contains(got, `cronvisor_skips_total{job="tick",reason="missed"} 1`+"\n") {
		t.Errorf("host-a's /metrics lacks cronvisor_skips_total{job=\"tick\",reason=\"missed\"} 1")
	}
	midSlot(time.Second)
	b = start(1)
	time.Sleep(3 * time.Second) // a slot more, and time for a second notification to arrive
	stopDaemons(t, a, b)

	aMissed, bMissed := missedOf(hosts[0]), missedOf(hosts[1])
	t.Logf("down from %s; host-a missed %+v; host-b missed %+v", down.Format(time.RFC3339Nano), aMissed, bMissed)
	if len(aMissed) != 1 || !strings.Contains(aMissed[0].Reason, "fires from") || aMissed[0].ScheduledAt.Before(down.Add(-2*time.Second)) {
		t.Errorf("host-a's missed records %+v, want one for the slots passed while down", aMissed)
	}
	if len(bMissed) != 0 {
		t.Errorf("host-b recorded %+v, want nothing: host-a's record is the fleet's", bMissed)
	}
	var missed []received
	for _, r := range hook.under("/") {
		if r.body["event"] == "missed" {
			missed = append(missed, r)
		}
	}
	if len(missed) != 1 || missed[0].body["host"] != "host-a" {
		t.Errorf("webhook got %d missed notifications (%v), want one from host-a", len(missed), missed)
	}
	for i, s := range hosts {
		if ran := runsOf(s); ran == 0 {
			t.Errorf("%s ran nothing", names[i])
		}
	}
}

// midSlot sleeps at least d, then on to the middle of an `@every 2s`
// interval (an odd second), far from either slot.
func midSlot(d time.Duration) {
	until := time.Now().Add(d)
	next := until.Truncate(2 * time.Second).Add(time.Second)
	if next.Before(until) {
		next = next.Add(2 * time.Second)
	}
	time.Sleep(time.Until(next))
}

// runsOf counts the runs of s's history that started.
func runsOf(s *sandbox) int {
	n := 0
	for _, r := range s.historyJSON() {
		if r.Outcome == run.OK {
			n++
		}
	}
	return n
}
