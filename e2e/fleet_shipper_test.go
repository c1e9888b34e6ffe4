package e2e

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"
)

// A half-open connection to the shared history (issue 37, point 5): a
// host in a network namespace ships its records to PostgreSQL; its link
// is cut silently (DROP both ways) for 20 s while its runs go on and
// end; the shipper says `cannot ship` during the cut, and within 10 s of
// the heal every record written before it is in cronvisor_runs, with no
// `cannot ship` after shipping resumed.
func TestE2EFleetShipperHalfOpen(t *testing.T) {
	if testing.Short() {
		t.Skip("a 20 s cut: runs in the full suite")
	}
	t.Parallel()
	lab := newNetLab(t)
	srv := lab.sqlServer("postgres")
	dbName, raw := srv.newDB(t)
	h := lab.addHost("ship-a", lab.historyBackend(srv, dbName)+`
shutdown_grace: 3s
jobs:
  - name: tick
    schedule: "@every 1s"
    command: sleep 0.2
    timeout: 10s
`)
	d := h.start()
	defer func() {
		if t.Failed() {
			t.Logf("ship-a:\n%s", tail(d.stderr(), 40))
		}
	}()
	waitFor(t, 15*time.Second, "ship-a's first runs in the shared history", func() bool { return sharedCount(t, raw) >= 2 })
	// The control socket is a path in the state dir: it serves from the
	// namespace to a command inside it and to one outside alike.
	for where, status := range map[string]func(time.Duration, ...string) (int, string, string){
		"inside the namespace": h.runCV, "outside it": h.sandbox.runCV} {
		if code, out, errOut := status(20*time.Second, "status", "--json"); code != 0 || !strings.Contains(out, `"tick"`) {
			t.Errorf("status %s: exit %d, stdout %q, stderr %q; want the job tick", where, code, out, errOut)
		}
	}

	h.cut()
	cut := time.Now()
	time.Sleep(20 * time.Second)
	written := h.localRuns()
	h.heal()
	healed := time.Now()
	waitFor(t, 10*time.Second, "every record written before the heal in cronvisor_runs", func() bool {
		shared := sharedIDs(t, raw)
		for id := range written {
			if !shared[id] {
				return false
			}
		}
		return true
	})
	t.Logf("%d records shipped %v after the heal", len(written), time.Since(healed).Round(time.Millisecond))
	time.Sleep(2 * time.Second) // a late warning, were there one, comes with the next rounds
	stopDaemons(t, d)

	var warned, resumed time.Time
	for _, rec := range daemonLog(t, d) {
		at, _ := time.Parse(time.RFC3339Nano, rec["time"].(string))
		msg, _ := rec["msg"].(string)
		switch {
		case strings.HasPrefix(msg, "history backend: cannot ship"):
			if !resumed.IsZero() {
				t.Errorf("a cannot-ship warning at %s, after shipping resumed at %s: %v", at, resumed, rec)
			}
			if warned.IsZero() {
				warned = at
			}
		case strings.HasPrefix(msg, "history backend: shipping to the shared history again"):
			resumed = at
		}
	}
	if warned.IsZero() || warned.Before(cut) || warned.After(healed) {
		t.Errorf("first cannot-ship warning at %v, want one during the cut (%s to %s)", warned, cut.Format(time.RFC3339Nano), healed.Format(time.RFC3339Nano))
	}
	if resumed.Before(healed) {
		t.Errorf("shipping resumed at %v, want after the heal at %s", resumed, healed.Format(time.RFC3339Nano))
	}
	t.Logf("warned %v after the cut, resumed %v after the heal", warned.Sub(cut).Round(time.Millisecond), resumed.Sub(healed).Round(time.Millisecond))
}

// sharedIDs is the run ids in cronvisor_runs.
func sharedIDs(t *testing.T, db *sql.DB) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, `SELECT run_id FROM cronvisor_runs`)
	if err != nil {
		return nil // not created yet
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if rows.Scan(&id) == nil {
			out[id] = true
		}
	}
	return out
}

// sharedCount is how many records cronvisor_runs holds.
func sharedCount(t *testing.T, db *sql.DB) int { return len(sharedIDs(t, db)) }
