package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// No false host_lost after a server restart (issue 37, point 3): three
// hosts on a private PostgreSQL (lock and history backend), jobs running
// on them, every host with a host_lost webhook. PostgreSQL stops for 20 s
// and starts again: every heartbeat is stale and every lock free when it
// is back, yet no peer closes a run of a host that was up, since each
// waits a staleness period of its own beating, in which the others beat
// again. (A host really killed is still closed: TestE2EFleetPeer*.)
func TestE2EFleetServerRestartNoFalseHostLost(t *testing.T) {
	if testing.Short() {
		t.Skip("a 20-s outage of three hosts' server")
	}
	t.Parallel()
	srv := newSQLServer(t, "postgres") // its own: the test stops it
	db, raw := srv.newDB(t)
	hook, url := newReceiver(t)
	jobs := fmt.Sprintf(`defaults:
  notify: [{on: [host_lost], url: %q}]
jobs:
  - name: short
    schedule: "@every 1s"
    command: sleep 0.5
    timeout: 10s
  - name: quick
    schedule: "@every 1s"
    command: sleep 0.5
    timeout: 10s
  - name: tock
    schedule: "@every 2s"
    command: sleep 1.8
    timeout: 10s
    overlap: queue
`, url+"/hook")
	// Named so that each host owns one job (docs/fleet.md, "Slot
	// ownership"): short is host-b's, quick host-c's, tock host-a's.
	names := []string{"host-a", "host-b", "host-c"}
	var daemons []*proc
	for _, n := range names {
		daemons = append(daemons, fleetHostWith(t, srv, db, jobs).startHost(n))
	}
	defer func() {
		if t.Failed() {
			for i, d := range daemons {
				t.Logf("%s:\n%s", names[i], tail(d.stderr(), 30))
			}
		}
	}()
	allUp := func() bool {
		for _, n := range names {
			if !hostUp(t, raw, n) {
				return false
			}
		}
		return true
	}
	waitFor(t, 15*time.Second, "three hosts up, each with runs shipped", func() bool {
		var hosts int
		err := raw.QueryRowContext(t.Context(), `SELECT count(DISTINCT host) FROM cronvisor_runs WHERE outcome <> 'skipped'`).Scan(&hosts)
		return err == nil && hosts == 3 && allUp()
	})
	srv.stop()
	time.Sleep(20 * time.Second)
	if err := srv.start(); err != nil {
		t.Fatalf("restart PostgreSQL: %v", err)
	}
	back := time.Now()
	waitFor(t, 15*time.Second, "every host beating again", allUp)
	t.Logf("every host up %v after the restart", time.Since(back).Round(time.Millisecond))
	// A peer that judged wrongly would close within a staleness period
	// (3 s) plus a round; give it twice that, and runs to go on.
	time.Sleep(8 * time.Second)
	var lost int
	var reasons string
	if err := raw.QueryRowContext(t.Context(), `SELECT count(*), COALESCE(string_agg(host || ': ' || reason, '; '), '')
		FROM cronvisor_runs WHERE reason LIKE 'host lost%'`).Scan(&lost, &reasons); err != nil {
		t.Fatal(err)
	}
	if lost != 0 {
		t.Errorf("%d runs closed as host lost, want 0: %s", lost, reasons)
	}
	if got := hook.under("/hook"); len(got) != 0 {
		t.Errorf("%d host_lost webhooks, want 0: first %s", len(got), got[0].raw)
	}
	var runs int
	if err := raw.QueryRowContext(t.Context(), `SELECT count(*) FROM cronvisor_runs WHERE outcome = 'ok'
		AND started_at > $1`, back.UnixNano()).Scan(&runs); err != nil || runs == 0 {
		t.Errorf("%d runs ended ok after the restart (%v), want the fleet running again", runs, err)
	}
	stopDaemons(t, daemons...)
	for i, d := range daemons {
		if n := strings.Count(d.stderr(), "heartbeat resumed after a gap"); n == 0 {
			t.Errorf("%s never logged its heartbeat resuming after the outage", names[i])
		}
	}
}
