package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestKillEndsAResourceWait: `cronvisor kill` of a job whose fire waits
// for a slot of a full resource ends the wait at once, says so, and the
// fire is recorded skipped with the reason; the holder runs on.
func TestKillEndsAResourceWait(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	s := newSandbox(t, "shutdown_grace: 3s\n"+hogAndPatient)
	d := s.startHost("host-a")
	defer func() {
		if t.Failed() {
			t.Logf("daemon:\n%s", tail(d.stderr(), 30))
		}
	}()
	waitFor(t, 15*time.Second, "patient to wait for db", func() bool {
		_, st, _ := s.runCV(10*time.Second, "status")
		return strings.Contains(lineWith(st, "patient"), "waiting for db (1/1 held)")
	})
	began := time.Now()
	code, stdout, stderr := s.runCV(20*time.Second, "kill", "patient")
	took := time.Since(began)
	want := "killed patient: 1 fire waiting for a resource slot ended (recorded skipped)"
	if code != 0 || strings.TrimSpace(stdout) != want {
		t.Errorf("kill patient: exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}
	if took > 5*time.Second {
		t.Errorf("kill took %v", took)
	}
	var killed map[string]any
	waitFor(t, 10*time.Second, "patient's record of the killed wait", func() bool {
		for _, m := range s.historyRaw("--job", "patient") {
			if m["reason"] == "killed by operator while waiting for db" {
				killed = m
				return true
			}
		}
		return false
	})
	if killed["outcome"] != "skipped" {
		t.Errorf("record %v, want skipped", killed)
	}
	if w, _ := killed["resource_wait_ms"].(float64); w <= 0 {
		t.Errorf("record %v carries no wait", killed)
	}
	_, st, _ := s.runCV(10*time.Second, "status")
	if !strings.Contains(lineWith(st, "hog"), "running") {
		t.Errorf("status: hog %q, want it running on", lineWith(st, "hog"))
	}
	stopDaemons(t, d)
}
