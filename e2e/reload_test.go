package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nextRuns asks the daemon (status --json) for each job's next fire, with
// its jitter.
func nextRuns(t *testing.T, s *sandbox) map[string]time.Time {
	t.Helper()
	code, stdout, stderr := s.runCV(10*time.Second, "status", "--json")
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, stderr)
	}
	out := map[string]time.Time{}
	for _, l := range lines(stdout) {
		var row struct {
			Name    string    `json:"name"`
			NextRun time.Time `json:"next_run"`
		}
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatalf("status line %q: %v", l, err)
		}
		out[row.Name] = row.NextRun
	}
	return out
}

// TestE2EReloadEditAboveJitteredJobKeepsItsFire runs the daemon on a job
// with a jitter nearly as long as its interval, waits until a fire is
// pending (its slot passed, its jittered start at least 4 s away), then
// reloads twice before that start: an unchanged file (SIGHUP), and a file
// with a job and a comment added above (noticed on disk). Neither may move
// any job's next fire, and the pending fire must run, once, for its slot.
func TestE2EReloadEditAboveJitteredJobKeepsItsFire(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	const interval, margin = 15 * time.Second, 4 * time.Second
	job := `  - name: jit
    schedule: "*/15 * * * * *"
    jitter: 14s
    timeout: 5s
    command: echo "$CRONVISOR_SCHEDULED_AT" >> fires.txt
  - name: hourly
    schedule: "0 * * * *"
    timeout: 5s
    command: "true"
`
	s := newSandbox(t, "jobs:\n"+job)
	d := s.startDaemon()
	reloads := func() int { return strings.Count(d.stderr(), `"msg":"reloaded"`) }

	var due, slot time.Time
	for attempt := 0; ; attempt++ {
		due = nextRuns(t, s)["jit"]
		slot = due.Truncate(interval)
		if wait := time.Until(slot); wait > 0 {
			time.Sleep(wait + 100*time.Millisecond) // its slot passes; the fire waits for its jitter
		}
		if time.Until(due) >= margin {
			break
		}
		if attempt == 6 {
			t.Fatalf("no fire with a jitter over %v in %d slots", margin, attempt)
		}
		time.Sleep(time.Until(due) + 200*time.Millisecond) // past this fire
	}
	before := nextRuns(t, s)

	n := reloads()
	_ = syscall.Kill(d.pid(), syscall.SIGHUP)
	waitFor(t, 5*time.Second, "reload of the unchanged file", func() bool { return reloads() > n })
	if after := nextRuns(t, s); !sameTimes(after, before) {
		t.Errorf("an unchanged file moved next fires:\nbefore %v\nafter  %v", before, after)
	}

	n = reloads()
	edited := "state_dir: state\njobs:\n  # a job added above\n  - {name: added, schedule: '@daily', timeout: 5s, command: 'true'}\n" + job
	tmp := filepath.Join(s.dir, "jobs.yaml.new")
	if err := os.WriteFile(tmp, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, s.config); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "reload of the edited file", func() bool { return reloads() > n })
	after := nextRuns(t, s)
	if !after["jit"].Equal(due) || !after["hourly"].Equal(before["hourly"]) {
		t.Errorf("an edit above moved next fires:\nbefore %v\nafter  %v", before, after)
	}
	if time.Now().After(due) {
		t.Fatalf("the reloads took past the pending fire's start (%v): the test proves nothing", due)
	}

	want := slot.UTC().Format(time.RFC3339Nano)
	waitFor(t, time.Until(due)+5*time.Second, "the pending fire", func() bool {
		return strings.Contains(readFile(t, filepath.Join(s.dir, "fires.txt")), want)
	})
	if got := strings.Count(readFile(t, filepath.Join(s.dir, "fires.txt")), want); got != 1 {
		t.Errorf("slot %s ran %d times, want once", want, got)
	}
	stopDaemons(t, d)
}

func sameTimes(a, b map[string]time.Time) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !b[k].Equal(v) {
			return false
		}
	}
	return true
}
