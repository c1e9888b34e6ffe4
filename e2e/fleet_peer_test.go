package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestE2EFleetPeerClosesALostHostsRun runs two "hosts" (each daemon in a
// UTS namespace of its own, named host-a and host-b, each with its own
// state dir) on one PostgreSQL server, as lock_backend and
// history_backend both. host-b runs a 30 s job; its daemon, the run's
// keeper and the job are SIGKILLed: the session holding the run's lock
// ends with the keeper, host-b's heartbeat stops, and within 5 s host-a
// has closed the run in the shared history as interrupted, "host lost",
// and sent exactly one host_lost webhook. host-a has the job disabled,
// so that it neither runs it nor takes its lock over, but has its
// notification target.
func TestE2EFleetPeerClosesALostHostsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("two daemons, a 30 s job and a kill: seconds")
	}
	pg := sharedSQLServer(t, "postgres")
	dbName, raw := pg.newDB(t)
	hook, hookURL := newReceiver(t)
	arg := sleepArg("30")
	// One database for both: the peer reads the locks' sessions there.
	backends := pg.backend(dbName) + "\n" + strings.Replace(pg.backend(dbName), "lock_backend", "history_backend", 1) + "\n"
	_ = os.Setenv("CV_E2E_DB_PASSWORD", dbSecret)
	a := newSandbox(t, backends+fmt.Sprintf(`shutdown_grace: 3s
metrics: {listen: "127.0.0.1:0"}
jobs:
  - name: long
    schedule: "0 0 1 1 *" # never due here: no disabled skip hides the lost run's end
    command: sleep %s
    timeout: 1m
    enabled: false
    notify:
      - on: [host_lost]
        url: %s/hook
`, arg, hookURL))
	b := newSandbox(t, backends+fmt.Sprintf(`shutdown_grace: 3s
jobs:
  - name: long
    schedule: "@every 2s"
    command: sleep %s
    timeout: 1m
`, arg))
	host := func(s *sandbox, name string) *proc { return s.startHost(name) }
	da, db := host(a, "host-a"), host(b, "host-b")
	defer func() {
		if t.Failed() {
			t.Logf("host-a:\n%s\nhost-b:\n%s", tail(da.stderr(), 40), tail(db.stderr(), 40))
		}
	}()
	var runID string
	waitFor(t, 15*time.Second, "host-b's run in the shared history", func() bool {
		return raw.QueryRowContext(t.Context(), `SELECT run_id FROM cronvisor_runs
			WHERE job = 'long' AND host = 'host-b' AND outcome = 'running'`).Scan(&runID) == nil
	})
	waitFor(t, 5*time.Second, "host-a up", func() bool { return hostUp(t, raw, "host-a") })

	// host-b dies whole: its daemon, the run's keeper and the job.
	_ = syscall.Kill(db.pid(), syscall.SIGKILL)
	if n := b.killKeepers(); n != 1 {
		t.Errorf("killed %d keepers of host-b, want 1", n)
	}
	killCmdline("sleep " + arg)
	killed := time.Now()
	db.wait(5 * time.Second)

	var outcome, reason string
	waitFor(t, 5*time.Second, "the run closed by host-a", func() bool {
		err := raw.QueryRowContext(t.Context(), `SELECT outcome, reason FROM cronvisor_runs WHERE run_id = $1`, runID).
			Scan(&outcome, &reason)
		return err == nil && outcome == "interrupted"
	})
	t.Logf("closed %v after the kill: %s", time.Since(killed).Round(time.Millisecond), reason)
	if !strings.HasPrefix(reason, "host lost") || !strings.Contains(reason, "closed by host-a") {
		t.Errorf("reason %q, want host lost, closed by host-a", reason)
	}
	waitFor(t, 5*time.Second, "the host_lost webhook", func() bool { return len(hook.under("/hook")) > 0 })
	time.Sleep(2 * time.Second) // a second notification, were there one, would come within the peer's next rounds
	got := hook.under("/hook")
	if len(got) != 1 {
		t.Fatalf("%d webhook posts, want exactly one: %+v", len(got), got)
	}
	if body := got[0].body; body["event"] != "host_lost" || body["host"] != "host-b" || body["run_id"] != runID ||
		body["outcome"] != "interrupted" {
		t.Errorf("webhook body %v, want host_lost of host-b's run %s", body, runID)
	}
	// The closing took the one path of every end: counted once, by the
	// peer that closed it.
	metrics := "http://" + metricsAddrLog.FindStringSubmatch(da.stderr())[1] + "/metrics"
	if got := httpGet(t, metrics); !strings.Contains(got, `cronvisor_runs_total{job="long",outcome="interrupted"} 1`+"\n") {
		t.Errorf("host-a's /metrics lacks cronvisor_runs_total{job=\"long\",outcome=\"interrupted\"} 1")
	}
	var endedNS int64
	if err := raw.QueryRowContext(t.Context(), `SELECT ended_at FROM cronvisor_runs WHERE run_id = $1`, runID).Scan(&endedNS); err != nil {
		t.Fatal(err)
	}
	checkStatusAndConsole(t, a, "long", "interrupted", time.Unix(0, endedNS))
	stopDaemons(t, da)
}

// checkStatusAndConsole checks that job's `status --json` says outcome
// ended at ended (within a second), and so does its row in the console.
func checkStatusAndConsole(t *testing.T, s *sandbox, job, outcome string, ended time.Time) {
	t.Helper()
	var got map[string]any
	waitFor(t, time.Second, job+"'s status saying "+outcome, func() bool {
		_, out, _ := s.runCV(5*time.Second, "status", "--json")
		for _, l := range lines(out) {
			var st map[string]any
			if json.Unmarshal([]byte(l), &st) == nil && st["name"] == job {
				got = st
			}
		}
		at, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(got["last_ended_at"]))
		return got["last_outcome"] == outcome && at.Sub(ended).Abs() < time.Second
	})
	tm := startTmux(t, s, 160, 20, cvBin, "ui", "--config", s.config)
	tm.await(10*time.Second, "the console's row of "+job+" saying "+outcome, func(screen string) bool {
		return strings.Contains(lineWith(screen, " "+job+" "), " "+outcome)
	})
}

// hostUp reports whether host's heartbeat is fresh on the server.
func hostUp(t *testing.T, db *sql.DB, host string) bool {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	var up bool
	err := db.QueryRowContext(ctx, `SELECT now() - last_beat < interval '3 seconds' AND NOT stopped
		FROM cronvisor_hosts WHERE host = $1`, host).Scan(&up)
	return err == nil && up
}
