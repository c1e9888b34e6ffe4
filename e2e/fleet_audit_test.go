package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/store/history"
)

// allowJobs is a job that allows overlaps: it takes no lock. Hosts whose
// jobs.yaml give it the same slots leave each slot to its owner (package
// owner); allowJobsElsewhere names its zone, so a host with it is never
// handed host-a's job and runs every slot of its own: the copies audit
// must count once.
const allowJobs = `jobs:
  - name: every
    schedule: "@every 1s"
    command: "sleep 0.3"
    timeout: 10s
    overlap: allow
`

const allowJobsElsewhere = allowJobs + "    timezone: UTC\n"

// auditJSONLine is one slot of `audit --json`.
type auditJSONLine struct {
	Job    string   `json:"job"`
	Slot   string   `json:"slot"`
	Class  string   `json:"class"`
	Host   string   `json:"host"`
	Copies int      `json:"copies"`
	Reason string   `json:"reason"`
	RunIDs []string `json:"run_ids"`
}

// auditCounts parses audit --json's lines, fails the test on a line it
// cannot read and on each missed or duplicated slot, and counts the
// slots by class.
func auditCounts(t *testing.T, out string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, l := range lines(out) {
		var slot auditJSONLine
		if err := json.Unmarshal([]byte(l), &slot); err != nil {
			t.Fatalf("audit --json line %q: %v", l, err)
		}
		counts[slot.Class]++
		if slot.Class == "missed" || slot.Class == "duplicated" {
			t.Errorf("audit: %s slot %s: %s on %s (%s)", slot.Job, slot.Slot, slot.Class, slot.Host, slot.Reason)
		}
	}
	return counts
}

// TestE2EFleetAuditOverlapAllow: two hosts on one PostgreSQL history run
// an overlap: allow job every second, each host every slot (their
// jobs.yaml differ, so neither leaves a slot to the other).
// Audit counts each such slot once as ran, with both hosts' copies in
// --json, none duplicated, and exits 0.
func TestE2EFleetAuditOverlapAllow(t *testing.T) {
	if testing.Short() {
		t.Skip("two daemons run for about five seconds")
	}
	t.Parallel()
	srv := sharedSQLServer(t, "postgres")
	db, _ := srv.newDB(t)
	a, b := fleetHostWith(t, srv, db, allowJobs), fleetHostWith(t, srv, db, allowJobsElsewhere)
	da, dbb := a.startHost("host-a"), b.startHost("host-b")
	time.Sleep(4 * time.Second)
	stopDaemons(t, da, dbb) // each ships its last records as it stops
	waitFor(t, 5*time.Second, "both outboxes shipped", func() bool { return a.outbox() == 0 && b.outbox() == 0 })

	code, out, stderr := a.runCV(30*time.Second, "audit", "--json")
	if code != 0 || !strings.Contains(stderr, "missed 0, duplicated 0") {
		t.Fatalf("audit --json: exit %d, want 0 with missed 0, duplicated 0; stderr %q; stdout:\n%s", code, stderr, out)
	}
	both := 0
	for _, l := range lines(out) {
		var s auditJSONLine
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if s.Class == "duplicated" || (s.Class == "ran" && s.Copies != len(s.RunIDs)) {
			t.Errorf("slot %s: %s with %d copies of runs %v, want ran with one copy per run", s.Slot, s.Class, s.Copies, s.RunIDs)
		}
		if s.Class == "ran" && s.Copies == 2 {
			both++
			if s.Host != "host-a,host-b" || !strings.HasPrefix(s.Reason, "2 copies (overlap: allow): ") {
				t.Errorf("slot %s: host %q, reason %q; want host-a,host-b and its 2 copies", s.Slot, s.Host, s.Reason)
			}
		}
	}
	if both < 2 {
		t.Errorf("%d slots ran by both hosts, want >= 2:\n%s", both, out)
	}
	t.Logf("%d slots ran by both hosts; %s", both, strings.TrimSpace(stderr))
}

// TestE2EFleetLostHostsLateGuess: host-b dies whole mid-run and host-a
// closes the run as host lost, ended at host-b's last beat. When host-b
// comes back, its recovery records the run interrupted, ended at the
// restart; shipped, that guess keeps host-a's earlier end in the shared
// history and adds its reason after host-a's.
func TestE2EFleetLostHostsLateGuess(t *testing.T) {
	if testing.Short() {
		t.Skip("two daemons, a kill and a restart: seconds")
	}
	t.Parallel()
	pg := sharedSQLServer(t, "postgres")
	dbName, raw := pg.newDB(t)
	arg := sleepArg("30")
	// One database for both: the peer reads the locks' sessions there.
	backends := pg.backend(dbName) + "\n" + strings.Replace(pg.backend(dbName), "lock_backend", "history_backend", 1) + "\n"
	_ = os.Setenv("CV_E2E_DB_PASSWORD", dbSecret)
	job := func(schedule string, enabled bool) string {
		return backends + fmt.Sprintf("shutdown_grace: 3s\njobs:\n  - name: long\n    schedule: %q\n    command: sleep %s\n    timeout: 1m\n    enabled: %v\n",
			schedule, arg, enabled)
	}
	a, b := newSandbox(t, job("0 0 1 1 *", false)), newSandbox(t, job("@every 2s", true))
	da, db := a.startHost("host-a"), b.startHost("host-b")
	var runID string
	waitFor(t, 15*time.Second, "host-b's run in the shared history", func() bool {
		return raw.QueryRowContext(t.Context(), `SELECT run_id FROM cronvisor_runs
			WHERE job = 'long' AND host = 'host-b' AND outcome = 'running'`).Scan(&runID) == nil
	})
	waitFor(t, 5*time.Second, "host-a up", func() bool { return hostUp(t, raw, "host-a") })
	_ = syscall.Kill(db.pid(), syscall.SIGKILL)
	b.killKeepers()
	killCmdline("sleep " + arg)
	db.wait(5 * time.Second)

	var peerEnd int64
	var peerReason string
	waitFor(t, 10*time.Second, "the run closed by host-a", func() bool {
		return raw.QueryRowContext(t.Context(), `SELECT ended_at, reason FROM cronvisor_runs
			WHERE run_id = $1 AND outcome = 'interrupted'`, runID).Scan(&peerEnd, &peerReason) == nil
	})
	time.Sleep(time.Second) // host-b comes back a while after its last beat
	db = b.startHost("host-b")
	var ended int64
	var reason string
	waitFor(t, 15*time.Second, "host-b's own guess shipped", func() bool {
		err := raw.QueryRowContext(t.Context(), `SELECT ended_at, reason FROM cronvisor_runs WHERE run_id = $1`, runID).
			Scan(&ended, &reason)
		return err == nil && reason != peerReason
	})
	stopDaemons(t, da, db)
	own := localRecord(t, b, runID)
	if !strings.HasPrefix(own.Reason, "supervisor (pid ") || own.EndedAt.UnixNano() <= peerEnd {
		t.Fatalf("host-b's own record: %q ended %v; want recovery's guess, ended after host-a's estimate %v",
			own.Reason, own.EndedAt, time.Unix(0, peerEnd))
	}
	if ended != peerEnd {
		t.Errorf("shared ended_at %v, want host-a's estimate %v, not host-b's restart %v", time.Unix(0, ended), time.Unix(0, peerEnd), own.EndedAt)
	}
	if want := peerReason + "; on its return host-b recorded: " + own.Reason; reason != want {
		t.Errorf("shared reason %q, want %q", reason, want)
	}
}

// localRecord is run runID's record in host s's own store.
func localRecord(t *testing.T, s *sandbox, runID string) run.Record {
	t.Helper()
	st, err := history.OpenReadOnly(filepath.Join(s.state, "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	r, _, err := st.Record(ctx, runID)
	if err != nil {
		t.Fatalf("host-b's record of %s: %v", runID, err)
	}
	return r
}
