package e2e

import (
	"database/sql"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ownerJobs are three jobs a second, each owned by one of host-a, host-b
// and host-c (own-a is host-a's, own-b host-a's too, own-c host-c's, by
// the rendezvous hash; host-b runs none while host-a lives).
const ownerJobs = `jobs:
  - name: own-a
    schedule: "@every 1s"
    command: "true"
    timeout: 10s
  - name: own-b
    schedule: "@every 1s"
    command: "true"
    timeout: 10s
  - name: own-c
    schedule: "@every 1s"
    command: "true"
    timeout: 10s
`

// sharedSlot is a slot's records in the shared history.
type sharedSlot struct {
	runs, skips int
	hosts       []string
	reasons     []string
	late        time.Duration // the latest start after the slot
}

// sharedSlots reads the shared history's scheduled records of job with
// slots in [from, to), by slot.
func sharedSlots(t *testing.T, db *sql.DB, job string, from, to time.Time) map[time.Time]*sharedSlot {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), `SELECT scheduled_at, COALESCE(started_at, 0), host, outcome, reason
		FROM cronvisor_runs WHERE job = $1 AND NOT manual AND scheduled_at >= $2 AND scheduled_at < $3`,
		job, from.UnixNano(), to.UnixNano())
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[time.Time]*sharedSlot{}
	for rows.Next() {
		var slotNS, startNS int64
		var host, outcome, reason string
		if err := rows.Scan(&slotNS, &startNS, &host, &outcome, &reason); err != nil {
			t.Fatal(err)
		}
		s := out[time.Unix(0, slotNS)]
		if s == nil {
			s = &sharedSlot{}
			out[time.Unix(0, slotNS)] = s
		}
		s.hosts = append(s.hosts, host)
		if outcome == "skipped" {
			s.skips++
			s.reasons = append(s.reasons, reason)
			continue
		}
		s.runs++
		if startNS > 0 {
			s.late = max(s.late, time.Unix(0, startNS).Sub(time.Unix(0, slotNS)))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// failoverLate bounds how late a slot whose owner died runs on the next
// host: the owner's staleness (3 s), one read of the hosts (1 s), the
// margin (0.5 s), and a second for a loaded test machine.
const failoverLate = 5500 * time.Millisecond

// Three hosts, three jobs a second: each slot is run once, by its owner,
// with no skip record from the others. Then the owner of own-a is
// SIGKILLed: its slots are run by another host within failoverLate, none
// missed (audit exits 0), none twice.
func TestE2EFleetOwnerEachSlotOnceAndFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("three daemons for about twenty seconds (-short)")
	}
	t.Parallel()
	srv := sharedSQLServer(t, "postgres")
	db, raw := srv.newDB(t)
	names := []string{"host-a", "host-b", "host-c"}
	hosts := map[string]*sandbox{}
	daemons := map[string]*proc{}
	for _, n := range names {
		hosts[n] = fleetHostWith(t, srv, db, ownerJobs)
		daemons[n] = hosts[n].startHost(n)
	}
	defer func() {
		if t.Failed() {
			for _, n := range names {
				t.Logf("%s:\n%s", n, tail(daemons[n].stderr(), 30))
			}
		}
	}()
	waitFor(t, 10*time.Second, "three hosts up", func() bool {
		return hostUp(t, raw, "host-a") && hostUp(t, raw, "host-b") && hostUp(t, raw, "host-c")
	})
	// A host's job digests are published at its first read after its
	// first beat, and its peers see them at their next read: from three
	// seconds on every host has a view of all three with their jobs.
	from := time.Now().Add(3 * time.Second).Truncate(time.Second).Add(time.Second)
	time.Sleep(10 * time.Second)
	to := time.Now().Add(-time.Second).Truncate(time.Second) // the newest slots' records are shipped
	owners := map[string]string{}
	for _, job := range []string{"own-a", "own-b", "own-c"} {
		slots := sharedSlots(t, raw, job, from, to)
		if len(slots) < 4 {
			t.Fatalf("%s: %d slots in %v..%v, want 4 at least", job, len(slots), from, to)
		}
		for at, s := range slots {
			if s.runs != 1 || s.skips != 0 {
				t.Errorf("%s slot %v: %d runs, %d skips (%v, %v); want one run and no skip", job, at, s.runs, s.skips, s.hosts, s.reasons)
			}
			owners[job] = s.hosts[0]
		}
	}
	t.Logf("owners: %v", owners)
	victim := owners["own-a"]
	_ = syscall.Kill(daemons[victim].pid(), syscall.SIGKILL)
	killed := time.Now()
	daemons[victim].wait(5 * time.Second)
	time.Sleep(9 * time.Second)
	survivor := names[0]
	if survivor == victim {
		survivor = names[1]
	}
	checkFailover(t, raw, hosts[survivor], victim, killed)
	var rest []*proc
	for _, n := range names {
		if n != victim {
			rest = append(rest, daemons[n])
		}
	}
	stopDaemons(t, rest...)
}

// checkFailover checks the slots of own-a from the kill of its owner
// victim on: each run once within failoverLate by another host (the slot
// the owner had claimed as it died may read skipped), and audit exit 0.
func checkFailover(t *testing.T, raw *sql.DB, s *sandbox, victim string, killed time.Time) {
	t.Helper()
	from, to := killed.Truncate(time.Second), time.Now().Add(-failoverLate).Truncate(time.Second)
	slots := sharedSlots(t, raw, "own-a", from, to)
	if len(slots) < int(to.Sub(from)/time.Second)-1 {
		t.Errorf("own-a: %d slots with records in %v..%v after the kill, want one a second", len(slots), from, to)
	}
	claimed := 0
	var latest time.Duration
	for at, sl := range slots {
		latest = max(latest, sl.late)
		switch {
		case sl.runs == 0 && sl.skips > 0 && strings.Contains(strings.Join(sl.reasons, ","), "on "+victim):
			claimed++ // the dying owner's claim, its record left in its store
		case sl.runs != 1:
			t.Errorf("own-a slot %v: %d runs (%v %v), want one", at, sl.runs, sl.hosts, sl.reasons)
		case sl.late > failoverLate:
			t.Errorf("own-a slot %v: started %v late, want at most %v", at, sl.late, failoverLate)
		}
	}
	if claimed > 1 {
		t.Errorf("%d slots left claimed by the dead owner, want at most the one it died in", claimed)
	}
	code, out, errOut := s.runCV(30*time.Second, "audit", "--since", "1m", "--json")
	counts := auditCounts(t, out)
	if code != 0 {
		t.Errorf("audit exit %d, want 0: %v\n%s", code, counts, errOut)
	}
	t.Logf("after the kill of %s: audit %s; own-a's slots started at most %v late", victim, fmt.Sprint(counts), latest)
}
