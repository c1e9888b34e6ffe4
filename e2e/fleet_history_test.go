package e2e

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/store/history"
)

// fleetJobs are the jobs both hosts of a fleet test run: a fire a second,
// 0.3 s long, each slot run by its owner (see docs/fleet.md, "Slot
// ownership"): tick is host-b's and tock host-a's, so that both hosts
// have records.
const fleetJobs = `jobs:
  - name: tick
    schedule: "@every 1s"
    command: "sleep 0.3"
    timeout: 10s
    overlap: skip
  - name: tock
    schedule: "@every 1s"
    command: "sleep 0.3"
    timeout: 10s
    overlap: skip
`

// fleetHost is one host of a fleet on database db of srv: its own
// directory and state dir, the locks and the history on the server.
func fleetHost(t *testing.T, srv sqlServer, db string) *sandbox {
	t.Helper()
	return fleetHostWith(t, srv, db, fleetJobs)
}

// fleetHostWith is a fleet host running jobs.
func fleetHostWith(t *testing.T, srv sqlServer, db, jobs string) *sandbox {
	t.Helper()
	hist := fmt.Sprintf("history_backend: {type: postgres, url: 'postgres://postgres:${CV_E2E_DB_PASSWORD}@127.0.0.1:%d/%s?sslmode=disable'}\n",
		srv.port, db)
	return sqlSandbox(t, srv, db, hist+jobs)
}

// localRuns is the run ids and hosts of a host's own store.
func (s *sandbox) localRuns() map[string]string {
	s.t.Helper()
	st, err := history.OpenReadOnly(filepath.Join(s.state, "history.db"))
	if err != nil {
		s.t.Fatal(err)
	}
	defer st.Close()
	recs, err := st.Query(context.Background(), history.Filter{})
	if err != nil {
		s.t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range recs {
		out[r.RunID] = r.Host
	}
	return out
}

// outbox is how many records of a host's store wait to be shipped.
func (s *sandbox) outbox() int {
	s.t.Helper()
	st, err := history.OpenReadOnly(filepath.Join(s.state, "history.db"))
	if err != nil {
		s.t.Fatal(err)
	}
	defer st.Close()
	n, err := st.Outbox(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	return n
}

// sharedRuns is `history --json` of host s: run ids and hosts, failing
// on a run id shown twice.
func (s *sandbox) sharedRuns() map[string]string {
	s.t.Helper()
	out := map[string]string{}
	for _, r := range s.historyJSON() {
		if _, dup := out[r.RunID]; dup {
			s.t.Fatalf("run %s shown twice", r.RunID)
		}
		out[r.RunID] = r.Host
	}
	return out
}

// hostCounts counts records by host.
func hostCounts(runs map[string]string) map[string]int {
	out := map[string]int{}
	for _, h := range runs {
		out[h]++
	}
	return out
}

// Two hosts share one history: each host's `history` shows both hosts'
// records, every run once.
func TestE2EFleetHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two daemons for 6 s (-short)")
	}
	t.Parallel()
	srv := sharedSQLServer(t, "postgres")
	db, _ := srv.newDB(t)
	a, b := fleetHost(t, srv, db), fleetHost(t, srv, db)
	da, db2 := a.startHost("host-a"), b.startHost("host-b")
	time.Sleep(6 * time.Second)
	for _, s := range []*sandbox{a, b} {
		waitFor(t, 5*time.Second, "both hosts in the shared history", func() bool {
			c := hostCounts(s.sharedRuns())
			return c["host-a"] > 0 && c["host-b"] > 0
		})
	}
	stopDaemons(t, da, db2)
	union := a.localRuns()
	maps.Copy(union, b.localRuns())
	for _, s := range []*sandbox{a, b} {
		got := s.sharedRuns()
		if !maps.Equal(got, union) {
			t.Errorf("shared history %v, want the hosts' own records %v", hostCounts(got), hostCounts(union))
		}
	}
	t.Logf("records by host: %v", hostCounts(union))
}

// PostgreSQL stopped for 10 s mid-run: the hosts keep recording locally,
// and once it is back the shared history holds every record of both
// local stores exactly once.
func TestE2EFleetHistoryOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("stops PostgreSQL for 10 s under two daemons (-short)")
	}
	t.Parallel()
	srv := newSQLServer(t, "postgres") // its own: it is stopped
	db, pool := srv.newDB(t)
	a, b := fleetHost(t, srv, db), fleetHost(t, srv, db)
	da, db2 := a.startHost("host-a"), b.startHost("host-b")
	time.Sleep(2 * time.Second)
	srv.stop()
	time.Sleep(10 * time.Second)
	if err := srv.start(); err != nil {
		t.Fatalf("restart postgres: %v", err)
	}
	waitFor(t, 20*time.Second, "both outboxes shipped", func() bool { return a.outbox() == 0 && b.outbox() == 0 })
	stopDaemons(t, da, db2)
	union := a.localRuns()
	maps.Copy(union, b.localRuns())
	rows, err := pool.QueryContext(context.Background(), `SELECT run_id, host, outcome FROM cronvisor_runs`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	shared, running := map[string]string{}, 0
	for rows.Next() {
		var id, host, outcome string
		if err := rows.Scan(&id, &host, &outcome); err != nil {
			t.Fatal(err)
		}
		shared[id] = host
		if run.Outcome(outcome) == run.Running {
			running++
		}
	}
	var lost, extra []string
	for id := range union {
		if _, ok := shared[id]; !ok {
			lost = append(lost, id)
		}
	}
	for id := range shared {
		if _, ok := union[id]; !ok {
			extra = append(extra, id)
		}
	}
	slices.Sort(lost)
	if len(lost) > 0 || len(extra) > 0 || running > 0 || hostCounts(union)["host-a"] == 0 || hostCounts(union)["host-b"] == 0 {
		t.Errorf("local records %v, shared %v: lost %v, not local %v, still running %d", hostCounts(union), hostCounts(shared), lost, extra, running)
	}
	t.Logf("records by host: %v, all shipped once", hostCounts(union))
}
