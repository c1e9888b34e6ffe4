package e2e

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// auditSummaryRE reads audit's summary line.
var auditSummaryRE = regexp.MustCompile(`(?m)^ran (\d+), skipped (\d+), missed (\d+), duplicated (\d+), open (\d+)$`)

// auditCounts runs `cronvisor audit` and returns its exit code, its
// summary's counts (ran, skipped, missed, duplicated, open) and stdout.
func (s *sandbox) auditCounts() (int, []int, string) {
	s.t.Helper()
	code, out, stderr := s.runCV(10*time.Second, "audit")
	m := auditSummaryRE.FindStringSubmatch(out)
	if m == nil {
		s.t.Fatalf("audit: exit %d, no summary line in stdout:\n%s\nstderr: %s", code, out, stderr)
	}
	var counts []int
	for _, c := range m[1:] {
		n, _ := strconv.Atoi(c)
		counts = append(counts, n)
	}
	return code, counts, out
}

// TestE2EAuditRanThenMissed: a daemon firing `@every 1s` leaves every slot
// ran once; stopped for three seconds and started again with catch_up 0s,
// it records the slots it was down for as missed, and audit names them and
// exits 1.
func TestE2EAuditRanThenMissed(t *testing.T) {
	if testing.Short() {
		t.Skip("a daemon runs for about ten seconds")
	}
	t.Parallel()
	s := newSandbox(t, `jobs:
  - name: tick
    schedule: "@every 1s"
    command: "true"
    timeout: 5s
`)
	d := s.startDaemon()
	time.Sleep(4 * time.Second)
	code, c, out := s.auditCounts()
	if code != 0 || c[0] < 3 || c[2] != 0 || c[3] != 0 {
		t.Fatalf("audit while running: exit %d, counts %v, want exit 0, ran >= 3, missed 0, duplicated 0:\n%s", code, c, out)
	}
	stopDaemons(t, d)
	time.Sleep(3 * time.Second)
	body := strings.Replace(readFile(t, s.config), "timeout: 5s", "timeout: 5s\n    catch_up: 0s", 1)
	if err := os.WriteFile(s.config, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	d = s.startDaemon()
	var first time.Time
	var fires int
	waitFor(t, 5*time.Second, "the missed record", func() bool {
		for _, r := range s.historyJSON("--outcome", "skipped") {
			if strings.HasPrefix(r.Reason, "missed while down") {
				first, fires = r.ScheduledAt, missedCount(r.Reason)
				return true
			}
		}
		return false
	})
	code, c, out = s.auditCounts()
	if code != 1 || c[2] != fires || c[3] != 0 || fires < 2 {
		t.Fatalf("audit after the restart: exit %d, counts %v, want exit 1, missed %d (>= 2), duplicated 0:\n%s", code, c, fires, out)
	}
	var named []time.Time
	for _, l := range lines(out) {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "tick" && f[2] == "missed" {
			at, err := time.Parse(time.RFC3339Nano, f[1])
			if err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			named = append(named, at)
		}
	}
	for i, at := range named {
		if want := first.Add(time.Duration(i) * time.Second); !at.Equal(want) {
			t.Errorf("missed slot %d: %v, want %v", i, at, want)
		}
	}
	t.Logf("audit after the restart:\n%s", out)
	if len(named) != fires {
		t.Errorf("audit named %d missed slots, the record says %d:\n%s", len(named), fires, out)
	}
	stopDaemons(t, d)
}

// missedCount is N of a missed record's " (N fires from T)", 1 without.
func missedCount(reason string) int {
	m := regexp.MustCompile(`\((\d+) fires from `).FindStringSubmatch(reason)
	if m == nil {
		return 1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
