package e2e

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The fleet under chaos (issue 27's first "done when"): three hosts on one
// PostgreSQL server for locks and history, four jobs every 1-2 s running
// 0.3-3 s, for 60 s, a random daemon SIGKILLed and restarted every ~10 s.
// audit, asked while the hosts are up, finds no slot run twice and none
// missed, and each host's history shows the runs of all three.
func TestE2EFleetChaosEachSlotOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test (60 s): runs in the full suite")
	}
	t.Parallel()
	srv := sharedSQLServer(t, "postgres")
	db, _ := srv.newDB(t)
	jobs := "jobs:\n"
	// Named so that each host owns one at least (docs/fleet.md, "Slot
	// ownership"): quick is host-c's, tock host-a's, tick and long host-b's.
	for _, j := range []struct{ name, every, sleep string }{
		{"quick", "1s", "0.3"}, {"tick", "1s", "0.8"}, {"tock", "2s", "1.5"}, {"long", "2s", "3"},
	} {
		jobs += fmt.Sprintf("  - name: %s\n    schedule: \"@every %s\"\n    command: sleep %s\n    timeout: 10s\n", j.name, j.every, j.sleep)
	}
	hostNames := []string{"host-a", "host-b", "host-c"}
	var hosts []*sandbox
	var daemons []*proc
	for _, h := range hostNames {
		s := fleetHostWith(t, srv, db, jobs)
		hosts = append(hosts, s)
		daemons = append(daemons, s.startHost(h))
	}
	end := time.Now().Add(60 * time.Second)
	kills := 0
	for time.Now().Before(end) {
		time.Sleep(time.Duration(8000+rand.IntN(4000)) * time.Millisecond)
		i := rand.IntN(len(hosts))
		_ = syscall.Kill(daemons[i].pid(), syscall.SIGKILL)
		daemons[i].wait(5 * time.Second)
		kills++
		time.Sleep(time.Duration(200+rand.IntN(1500)) * time.Millisecond)
		daemons[i] = hosts[i].startHost(hostNames[i])
	}
	time.Sleep(3 * time.Second) // the last records are shipped
	code, out, errOut := hosts[0].runCV(60*time.Second, "audit", "--since", "2m", "--json")
	counts := auditCounts(t, out)
	t.Logf("%d kills; audit: %v; %s", kills, counts, strings.TrimSpace(errOut))
	if code != 0 || counts["ran"] < 60 {
		t.Errorf("audit exit %d with %v, want 0 and at least 60 slots ran; stderr:\n%s", code, counts, errOut)
	}
	stopDaemons(t, daemons...)
	for i, s := range hosts {
		seen := map[string]int{}
		for _, r := range s.historyJSON("--limit", "0") {
			if r.Outcome != "skipped" {
				seen[r.Host]++
			}
		}
		for _, h := range hostNames {
			if seen[h] == 0 {
				t.Errorf("%s's history shows no run of %s: %v", hostNames[i], h, seen)
			}
		}
	}
}
