package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestE2ERetriesCutShortRecordedAndNotified: a slot that failed and waits
// a minute for its retry is cut short by SIGTERM, by `cronvisor kill`,
// or by SIGKILL of its daemon when the next daemon cannot resume it (then
// its recovery records it); each time the slot's one record says why no retry started, and
// one failure notification says so too.
func TestE2ERetriesCutShortRecordedAndNotified(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	for _, tc := range []struct {
		name, reason string
		cut          func(t *testing.T, s *sandbox, d *proc) *proc // returns the daemon to stop, if any
	}{
		{"SIGTERM of the daemon", "no retry: supervisor stopping", func(t *testing.T, s *sandbox, d *proc) *proc {
			stopDaemons(t, d)
			return nil
		}},
		{"cronvisor kill", "no retry: killed by operator", func(t *testing.T, s *sandbox, d *proc) *proc {
			if code, _, stderr := s.runCV(10*time.Second, "kill", "doomed"); code != 0 {
				t.Errorf("kill: exit %d, stderr %q", code, stderr)
			}
			return d
		}},
		// A dead daemon's slot is resumed by the next one (TestE2EEveryEndTakesOnePath);
		// one that cannot be, here because the job was disabled meanwhile, ends with why.
		{"SIGKILL of the daemon, the job disabled", "no retry: the job is disabled", func(t *testing.T, s *sandbox, d *proc) *proc {
			_ = syscall.Kill(d.pid(), syscall.SIGKILL)
			d.wait(5 * time.Second)
			body := strings.Replace(readFile(t, s.config), "    retries: 3\n", "    retries: 3\n    enabled: false\n", 1)
			if err := os.WriteFile(s.config, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			return s.startDaemon()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec, url := newReceiver(t)
			at := time.Now().UTC().Add(3 * time.Second)
			s := newSandbox(t, fmt.Sprintf(`jobs:
  - name: doomed
    schedule: "%s"
    timezone: UTC
    command: "echo doomed; exit 3"
    timeout: 5s
    retries: 3
    retry_backoff: 1m
    notify:
      - {on: [failure], url: "%s/hook"}
`, firesAt(at), url))
			d := s.startDaemon()
			lockFile := filepath.Join(s.state, "locks", "doomed.lock")
			waitFor(t, 15*time.Second, "the first attempt's end and the backoff", func() bool {
				return len(s.historyJSON("--job", "doomed", "--outcome", "failed")) == 1 &&
					strings.Contains(readFile(t, lockFile), `"retry_at"`)
			})
			if n := len(rec.under("/hook")); n != 0 {
				t.Errorf("%d notifications while the slot waits for its retry, want none", n)
			}
			if next := tc.cut(t, s, d); next != nil {
				waitFor(t, 15*time.Second, "the failure notification", func() bool { return len(rec.under("/hook")) > 0 })
				stopDaemons(t, next)
			}
			records := s.historyJSON("--job", "doomed")
			if len(records) != 1 || records[0].Outcome != "failed" || records[0].Attempt != 1 || records[0].Reason != tc.reason {
				t.Errorf("history %+v, want one failed attempt 1 with reason %q", records, tc.reason)
			}
			got := rec.under("/hook")
			if len(got) != 1 || got[0].body["event"] != "failure" || got[0].body["reason"] != tc.reason ||
				got[0].body["attempt"] != float64(1) {
				t.Errorf("notifications %+v, want one failure of attempt 1 with reason %q", got, tc.reason)
			}
		})
	}
}
