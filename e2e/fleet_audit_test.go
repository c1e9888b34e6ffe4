package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// allowJobs is a job that allows overlaps: it takes no lock, so every
// host of a fleet runs each of its slots.
const allowJobs = `jobs:
  - name: every
    schedule: "@every 1s"
    command: "sleep 0.3"
    timeout: 10s
    overlap: allow
`

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

// TestE2EFleetAuditOverlapAllow: two hosts on one PostgreSQL history run
// an overlap: allow job every second, each host every slot, by design.
// Audit counts each such slot once as ran, with both hosts' copies in
// --json, none duplicated, and exits 0.
func TestE2EFleetAuditOverlapAllow(t *testing.T) {
	if testing.Short() {
		t.Skip("two daemons run for about five seconds")
	}
	t.Parallel()
	srv := sharedSQLServer(t, "postgres")
	db, _ := srv.newDB(t)
	a, b := fleetHostWith(t, srv, db, allowJobs), fleetHostWith(t, srv, db, allowJobs)
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
