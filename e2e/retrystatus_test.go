package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/ctl"
)

// ctlStatusOf is job's row of `status --json`, whole.
func (s *sandbox) ctlStatusOf(job string) ctl.JobStatus {
	s.t.Helper()
	code, stdout, stderr := s.runCV(10*time.Second, "status", "--json")
	if code != 0 {
		s.t.Fatalf("status: exit %d: %s", code, stderr)
	}
	for _, l := range lines(stdout) {
		var row ctl.JobStatus
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			s.t.Fatalf("status line %q: %v", l, err)
		}
		if row.Name == job {
			return row
		}
	}
	s.t.Fatalf("no job %s in status:\n%s", job, stdout)
	return ctl.JobStatus{}
}

// TestE2EWaitingRetryIsShown: a slot whose first attempt failed and
// waits a minute for its second reads `retry 2/3 at T` in `status`, the
// console's row and `status --json` (retry_at about a minute after the
// attempt's end, no dead pid as holder); once `kill` cuts the retries
// short, the attempt's restated end counts one run and one failure, in
// the daemon's status and in the console's row alike.
func TestE2EWaitingRetryIsShown(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules and retries; runs in the full suite")
	}
	t.Parallel()
	at := time.Now().UTC().Add(3 * time.Second)
	s := newSandbox(t, fmt.Sprintf(`jobs:
  - name: doomed
    schedule: "%s"
    timezone: UTC
    command: "exit 3"
    timeout: 5s
    retries: 2
    retry_backoff: 1m
`, firesAt(at)))
	d := s.startDaemon()
	tm := startTmux(t, s, 140, 30, cvBin, "--config", s.config, "ui")
	var js ctl.JobStatus
	waitFor(t, 15*time.Second, "the slot waiting for its retry", func() bool {
		js = s.ctlStatusOf("doomed")
		return js.State == ctl.StateRetrying
	})
	recs := s.historyJSON("--job", "doomed")
	if len(recs) != 1 {
		t.Fatalf("history %+v, want the first attempt", recs)
	}
	if js.Attempt != 2 || js.MaxAttempts != 3 || js.Holder != nil || js.PID != 0 ||
		js.RetryAt.Sub(recs[0].EndedAt).Round(time.Second) != time.Minute {
		t.Errorf("status --json %+v, want attempt 2 of 3, retry_at a minute after %v, no holder", js, recs[0].EndedAt)
	}
	want := "retry 2/3 at " + js.RetryAt.Local().Format(time.TimeOnly)
	if row, _ := s.statusRow("doomed"); !strings.Contains(row, want) {
		t.Errorf("status row %q, want %q", row, want)
	}
	tm.await(10*time.Second, "the console's row saying "+want, func(sc string) bool {
		return strings.Contains(lineWith(sc, "doomed "), want)
	})

	s.runCV(10*time.Second, "kill", "doomed") // its exit status is the verb's own business
	waitFor(t, 10*time.Second, "the slot's end", func() bool {
		js = s.ctlStatusOf("doomed")
		return js.State == ctl.StateIdle
	})
	if js.Counts.Runs != 1 || js.Counts.Failures != 1 || js.LastOutcome != "failed" || !js.RetryAt.IsZero() {
		t.Errorf("status --json after the cut %+v, want idle, 1 run, 1 failure, last failed", js)
	}
	tm.await(10*time.Second, "the console's row counting 1/0/1", func(sc string) bool {
		row := lineWith(sc, "doomed ")
		return strings.Contains(row, "1/0/1") && !strings.Contains(row, "retry")
	})
	stopDaemons(t, d)
	tm.keys("q")
	waitFor(t, 10*time.Second, "the console to exit", tm.dead)
}
