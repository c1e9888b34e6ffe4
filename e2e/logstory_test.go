package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2ERepeatedSkipsLoggedOncePerMinute: a 1-s job whose lock a foreign
// process holds is skipped every second; history has each skip, the
// daemon's log one "run skipped" record for the job in that minute, and
// the count of the others.
func TestE2ERepeatedSkipsLoggedOncePerMinute(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	s := newSandbox(t, `jobs:
  - name: held
    schedule: "* * * * * *"
    command: "true"
    timeout: 5s
`)
	if err := os.MkdirAll(filepath.Join(s.state, "locks"), 0o700); err != nil {
		t.Fatal(err)
	}
	arg := sleepArg("30.7")
	s.startEnv(nil, "/usr/bin/flock", "-n", filepath.Join(s.state, "locks", "held.lock"), "sleep", arg)
	waitFor(t, 10*time.Second, "flock's command", func() bool { return len(withCmdline(arg)) >= 2 })
	d := s.startDaemon()
	waitFor(t, 20*time.Second, "five skips in history", func() bool {
		return len(s.historyJSON("--job", "held", "--outcome", "skipped")) >= 5
	})
	stopDaemons(t, d)
	skips := 0
	for _, r := range s.historyJSON("--job", "held", "--outcome", "skipped") {
		if !strings.HasPrefix(r.Reason, "lock held by") {
			t.Errorf("skip reason %q, want lock held by …", r.Reason)
		}
		skips++
	}
	// The first skip is logged; the rest of the minute is one record with
	// their count, written at the minute's end or, as here, at shutdown.
	var logged []map[string]any
	for _, r := range daemonLog(t, d) {
		if r["msg"] == "run skipped" && r["job"] == "held" {
			logged = append(logged, r)
		}
	}
	if len(logged) != 2 || logged[0]["repeats"] != nil || logged[1]["repeats"] != float64(skips-1) {
		t.Errorf("%d skips in history; \"run skipped\" records %v, want the first and one with repeats %d", skips, logged, skips-1)
	}
}

// TestE2ERefusedReloadLogsNoSuccess: a bad edit of jobs.yaml, noticed on
// disk, is an ERROR per problem and no "config reloaded"; the fix after it
// is one.
func TestE2ERefusedReloadLogsNoSuccess(t *testing.T) {
	t.Parallel()
	good := "jobs:\n  - {name: a, schedule: \"@hourly\", command: \"true\", timeout: 5s}\n"
	s := newSandbox(t, good)
	d := s.startDaemon()
	if err := os.WriteFile(s.config, []byte("state_dir: state\njobs:\n  - {name: a, schedule: \"every tuesday\", command: \"true\", timeout: 5s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the refusal", func() bool { return strings.Contains(d.stderr(), "reload refused") })
	if err := os.WriteFile(s.config, []byte("state_dir: state\n"+good), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the good reload", func() bool { return strings.Contains(d.stderr(), `"msg":"reloaded"`) })
	stopDaemons(t, d)
	var msgs []string
	for _, r := range daemonLog(t, d) {
		if m := r["msg"].(string); strings.Contains(m, "reload") {
			msgs = append(msgs, m)
		}
	}
	want := "jobs.yaml changed on disk; reloading|reload refused; keeping the running jobs|jobs.yaml changed on disk; reloading|config reloaded|reloaded"
	if got := strings.Join(msgs, "|"); got != want {
		t.Errorf("reload records %q, want %q", got, want)
	}
}
