package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// TestE2EStopWhileBehindTellsEveryFireOnce: a daemon frozen (SIGSTOP)
// across several slots of an every-second job, then stopped (SIGTERM and
// SIGCONT at once), whether its loop or its stop reaches the overdue
// fires first: every slot from its first run to its last record has
// exactly one record (a missed record standing for the slots it names),
// the passed slots are one `missed` record, notified once, and `status`
// after it says what the newest record says.
func TestE2EStopWhileBehindTellsEveryFireOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of a frozen daemon")
	}
	t.Parallel()
	hooks, url := newReceiver(t)
	s := newSandbox(t, fmt.Sprintf(`shutdown_grace: 2s
jobs:
  - name: j
    schedule: "* * * * * *"
    command: "true"
    timeout: 5s
    notify: [{on: [missed, skip], url: "%s/hook"}]
`, url))
	d := s.startDaemon()
	waitFor(t, 10*time.Second, "two runs", func() bool { return len(s.historyJSON("--job", "j", "--outcome", "ok")) >= 2 })
	if err := syscall.Kill(d.pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3500 * time.Millisecond)
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	_ = syscall.Kill(d.pid(), syscall.SIGCONT)
	if code := d.wait(15 * time.Second); code != 0 {
		t.Fatalf("daemon exit %d: %s", code, tail(d.stderr(), 2000))
	}
	recs := s.historyJSON("--job", "j")
	slots := map[int64]int{}
	missed := 0
	for _, r := range recs {
		n := 1
		if r.Outcome == run.Skipped && strings.HasPrefix(r.Reason, "missed") {
			missed++
			t.Logf("missed record: %q", r.Reason) // "stopping while behind", or the loop's own
			if m := regexp.MustCompile(`\((\d+) fires from `).FindStringSubmatch(r.Reason); m != nil {
				n, _ = strconv.Atoi(m[1])
			}
		}
		for i := range n {
			slots[r.ScheduledAt.Add(time.Duration(i)*time.Second).Unix()]++
		}
	}
	first, last := recs[len(recs)-1].ScheduledAt.Unix(), recs[0].ScheduledAt.Unix()
	for sec := first; sec <= last; sec++ {
		if slots[sec] != 1 {
			t.Errorf("slot %s has %d records; want 1", time.Unix(sec, 0).UTC().Format(time.RFC3339), slots[sec])
		}
	}
	if missed != 1 {
		t.Errorf("%d missed records; want the frozen slots as one: %+v", missed, recs)
	}
	n := 0
	for _, q := range hooks.under("/hook") {
		if q.body["event"] == "missed" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d missed notifications; want 1", n)
	}
	if outcome, _ := (&endRig{sandbox: s}).status(); outcome != string(recs[0].Outcome) {
		t.Errorf("status says %q; want the newest record's %q", outcome, recs[0].Outcome)
	}
}
