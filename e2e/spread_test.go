package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// spreadBody is one file for two hosts: H, ~ and a jitter, each drawn from
// the job's name.
const spreadBody = `jobs:
  - {name: invoice, schedule: "H H * * *", command: "true", timeout: 5s, jitter: 30m}
  - {name: cronie, schedule: "~ ~ * * *", command: "true", timeout: 5s}
  - {name: payroll, schedule: "H H * * *", command: "true", timeout: 5s, jitter: 30m}
`

// nextRuns is each job's next fire as the sandbox's status shows it (the
// daemon's, jitter included).
func (s *sandbox) nextRuns() map[string]time.Time {
	s.t.Helper()
	code, stdout, stderr := s.runCV(10*time.Second, "status", "--json")
	if code != 0 {
		s.t.Fatalf("status: exit %d: %s", code, stderr)
	}
	out := map[string]time.Time{}
	for _, line := range lines(stdout) {
		var row struct {
			Name    string    `json:"name"`
			NextRun time.Time `json:"next_run"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			s.t.Fatalf("status line %q: %v", line, err)
		}
		out[row.Name] = row.NextRun
	}
	return out
}

// TestE2ESpreadEveryHostAgrees: two daemons on one file with two state
// dirs (two hosts) aim each job at the same instant, `next JOB` prints it,
// and a restart does not move it; two jobs written alike spread.
func TestE2ESpreadEveryHostAgrees(t *testing.T) {
	t.Parallel()
	a, b := newSandbox(t, spreadBody), newSandbox(t, spreadBody)
	// The daemons aim at the first slot after their start; next is asked
	// from just before it, so that a slot passed since does not count.
	from := time.Now().Format(time.RFC3339Nano)
	da, db := a.startDaemon(), b.startDaemon()
	na, nb := a.nextRuns(), b.nextRuns()
	for _, job := range []string{"invoice", "cronie", "payroll"} {
		if na[job].IsZero() || !na[job].Equal(nb[job]) {
			t.Errorf("%s: host a fires at %s, host b at %s", job, na[job], nb[job])
		}
		_, stdout, _ := a.runCV(10*time.Second, "next", job, "-n", "1", "--from", from)
		if got, err := time.Parse(time.RFC3339, strings.TrimSpace(stdout)); err != nil || !got.Equal(na[job]) {
			t.Errorf("next %s = %q, the daemon fires at %s", job, stdout, na[job])
		}
	}
	if na["invoice"].Equal(na["payroll"]) {
		t.Errorf("invoice and payroll both fire at %s", na["invoice"])
	}
	stopDaemons(t, db)
	db = b.startDaemon()
	if again := b.nextRuns(); !again["invoice"].Equal(na["invoice"]) || !again["cronie"].Equal(na["cronie"]) {
		t.Errorf("after a restart: %v, before %v", again, na)
	}
	stopDaemons(t, da, db)
}
