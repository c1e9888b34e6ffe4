package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// No false missed on a host joining a running fleet (issue 37, point 4):
// three hosts on one PostgreSQL (locks and history), jobs every 1-2 s, one
// of them `overlap: queue` with runs that outlast its period, so that
// peers skip slots for "lock held" (which advance no ledger cursor) and
// queue others. host-c is restarted 8 times, SIGTERM and SIGKILL in turn,
// while host-a and host-b run: it records no `missed` (they were up
// through its downtime and fired those slots), nobody is paged `missed`,
// and audit finds no slot missed (none a peer had queued was lost to a
// claim) nor run twice.
func TestE2EFleetRollingRestartNoFalseMissed(t *testing.T) {
	if testing.Short() {
		t.Skip("a 50-s rolling restart of one host of three")
	}
	t.Parallel()
	srv := sharedSQLServer(t, "postgres")
	db, raw := srv.newDB(t)
	hook, url := newReceiver(t)
	jobs := fmt.Sprintf(`defaults:
  notify: [{on: [missed], url: %q}]
jobs:
  - name: tick
    schedule: "@every 1s"
    command: sleep 0.2
    timeout: 10s
  - name: pair
    schedule: "@every 2s"
    command: sleep 0.7
    timeout: 10s
  - name: queued
    schedule: "@every 1s"
    command: sleep 1.4
    timeout: 10s
    overlap: queue
`, url+"/hook")
	names := []string{"host-a", "host-b", "host-c"}
	var hosts []*sandbox
	var daemons []*proc
	for _, n := range names {
		s := fleetHostWith(t, srv, db, jobs)
		hosts = append(hosts, s)
		daemons = append(daemons, s.startHost(n))
	}
	defer func() {
		if t.Failed() {
			t.Logf("host-c:\n%s", tail(daemons[2].stderr(), 30))
		}
	}()
	began := time.Now()
	waitFor(t, 10*time.Second, "host-a and host-b up", func() bool { return hostUp(t, raw, "host-a") && hostUp(t, raw, "host-b") })
	for i := range 8 {
		time.Sleep(2500 * time.Millisecond) // a few slots with host-c up
		c := daemons[2]
		if i%2 == 0 {
			_ = syscall.Kill(c.pid(), syscall.SIGTERM)
			if code := c.wait(10 * time.Second); code != 0 {
				t.Errorf("host-c exit %d after SIGTERM", code)
			}
		} else {
			_ = syscall.Kill(c.pid(), syscall.SIGKILL)
			c.wait(5 * time.Second)
		}
		time.Sleep(time.Duration(1500+i*150) * time.Millisecond) // slots pass with host-c down
		daemons[2] = hosts[2].startHost("host-c")
	}
	time.Sleep(3 * time.Second) // host-c's last start-up, and the records shipped
	stopDaemons(t, daemons...)
	var missed int
	var reasons string
	if err := raw.QueryRowContext(t.Context(), `SELECT count(*), COALESCE(string_agg(host || ' ' || job || ': ' || reason, '; '), '')
		FROM cronvisor_runs WHERE reason LIKE 'missed%'`).Scan(&missed, &reasons); err != nil {
		t.Fatal(err)
	}
	if missed != 0 {
		t.Errorf("%d missed records, want 0: %s", missed, reasons)
	}
	if got := hook.under("/hook"); len(got) != 0 {
		t.Errorf("%d missed notifications, want 0: first %s", len(got), got[0].raw)
	}
	since := fmt.Sprintf("%ds", int(time.Since(began).Seconds())+5)
	code, out, errOut := hosts[0].runCV(60*time.Second, "audit", "--since", since, "--json")
	counts := auditCounts(t, out)
	t.Logf("audit over %s: %v; %s", since, counts, strings.TrimSpace(errOut))
	if code != 0 || counts["ran"] < 60 {
		t.Errorf("audit exit %d with %v, want 0 and at least 60 slots ran; stderr:\n%s", code, counts, errOut)
	}
}
