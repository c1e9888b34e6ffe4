package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReloadDryRunChangesNothing: against a running daemon, `reload
// --dry-run NEW` prints what `diff` prints between the applied file and
// NEW (*/10 to */5: 144 slots added in 24 h) and changes nothing; once
// NEW is moved into place, the daemon's reload logs the same summary.
func TestReloadDryRunChangesNothing(t *testing.T) {
	const old = `jobs:
  - name: sync
    schedule: "*/10 * * * *"
    timeout: 1m
    command: "true"
`
	s := newSandbox(t, old)
	d := s.startDaemon()
	t.Cleanup(func() { stopDaemons(t, d) })
	next := filepath.Join(s.dir, "jobs.yaml.new")
	if err := os.WriteFile(next, []byte("state_dir: state\n"+strings.Replace(old, "*/10", "*/5", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	from := time.Now().UTC().Truncate(time.Minute).Add(time.Minute).Format(time.RFC3339)
	code, dry, errOut := s.runCV(20*time.Second, "reload", "--dry-run", next, "--from", from)
	if code != 0 {
		t.Fatalf("reload --dry-run: exit %d: %s", code, errOut)
	}
	code, diff, errOut := s.runCV(20*time.Second, "diff", s.config, next, "--from", from)
	if code != 0 {
		t.Fatalf("diff: exit %d: %s", code, errOut)
	}
	const summary = "1 job changed, 0 added, 0 removed; +144 -0 slots in 24h; fires at reload: none"
	if dry != diff || !strings.Contains(dry, "  schedule: */10 * * * * → */5 * * * *\n") || !strings.HasSuffix(dry, summary+"\n") {
		t.Fatalf("reload --dry-run printed\n%s\ndiff printed\n%s\nwant the same, ending %q", dry, diff, summary)
	}
	if n := strings.Count(d.stderr(), `"msg":"reloaded"`); n != 0 {
		t.Fatalf("the dry run reloaded the daemon %d times", n)
	}
	if got := nextRuns(t, s)["sync"]; got.Minute()%10 != 0 {
		t.Fatalf("after the dry run the daemon's next fire is %s, not on */10", got)
	}
	if err := os.Rename(next, s.config); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the reload of the moved file", func() bool {
		return strings.Contains(d.stderr(), `"msg":"reloaded"`)
	})
	for _, rec := range daemonLog(t, d) {
		if rec["msg"] == "reloaded" {
			if !strings.HasPrefix(rec["change"].(string), "1 job changed, 0 added, 0 removed; +") {
				t.Errorf("the reload logged change %q, want the diff's summary", rec["change"])
			}
			return
		}
	}
}
