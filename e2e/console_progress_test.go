package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestConsoleShowsProgress: a job that beats with `cronvisor heartbeat
// --progress` shows its newest progress in the console's detail, in a
// real terminal, as in `status --json`.
func TestConsoleShowsProgress(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, `jobs:
  - name: reindex
    schedule: "@yearly"
    command: i=0; while [ $i -lt 200 ]; do i=$((i+1)); '`+cvBin+`' heartbeat --progress "step $i/200" || exit 9; sleep 0.2; done
    timeout: 1m
    heartbeat_timeout: 10s
`)
	d := s.startDaemon()
	if code, _, errOut := s.runCV(10*time.Second, "trigger", "reindex"); code != 0 {
		t.Fatalf("trigger: exit %d: %s", code, errOut)
	}
	waitFor(t, 10*time.Second, "progress in status --json", func() bool {
		_, out, _ := s.runCV(10*time.Second, "status", "reindex", "--json")
		return strings.Contains(out, `"progress":"step `)
	})
	tm := startTmux(t, s, 120, 40, cvBin, "--config", s.config, "ui")
	tm.await(10*time.Second, "the jobs table", func(sc string) bool { return strings.Contains(sc, "reindex") })
	tm.keys("Enter")
	screen := tm.await(10*time.Second, "the progress in the detail", func(sc string) bool {
		return strings.Contains(sc, "progress step ") && strings.Contains(sc, "/200 (beat ")
	})
	t.Logf("the detail:\n%s", screen)
	if out, err := tm.run("send-keys", "-t", "cv", "q"); err != nil {
		t.Fatalf("tmux send-keys q: %v: %s", err, out)
	}
	if code, _, errOut := s.runCV(20*time.Second, "kill", "reindex"); code != 0 {
		t.Errorf("kill: exit %d: %s", code, errOut)
	}
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	if code := d.wait(20 * time.Second); code != 0 {
		t.Errorf("daemon exit %d", code)
	}
}
