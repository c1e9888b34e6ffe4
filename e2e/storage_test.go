package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// firingJob is a job that fires every second and appends its run id to
// fires, outside the state dir: the fires counted from the job's side.
func firingJob(fires string) string {
	return `jobs:
  - {name: tick, schedule: "* * * * * *", timeout: 10s, command: 'printf "%s\n" "$CRONVISOR_RUN_ID" >> ` + fires + `'}
`
}

// fired returns the run ids in the fires file, in order.
func fired(t *testing.T, fires string) []string {
	t.Helper()
	b, err := os.ReadFile(fires)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return lines(string(b))
}

// recordCounts returns how many history records each run id has.
func (s *sandbox) recordCounts() map[string]int {
	n := map[string]int{}
	for _, r := range s.historyJSON() {
		n[r.RunID]++
	}
	return n
}

// recordCountsSoFar is recordCounts for polling: a history that cannot be
// read yet (the daemon is creating it) counts as empty.
func (s *sandbox) recordCountsSoFar() map[string]int {
	n := map[string]int{}
	code, stdout, _ := s.runCV(20*time.Second, "history", "--json", "--limit", "0")
	if code != 0 {
		return n
	}
	for _, l := range lines(stdout) {
		var r struct {
			RunID string `json:"run_id"`
		}
		if json.Unmarshal([]byte(l), &r) == nil {
			n[r.RunID]++
		}
	}
	return n
}

// firesRecordedOnce reports whether every run id in the fires file has
// exactly one record so far.
func (s *sandbox) firesRecordedOnce(fires string) bool {
	counts := s.recordCountsSoFar()
	for _, id := range fired(s.t, fires) {
		if counts[id] != 1 {
			return false
		}
	}
	return true
}

// checkOneRecordEach fails for every run in runs without exactly one
// record; it returns how many have one.
func checkOneRecordEach(t *testing.T, s *sandbox, runs []string) {
	t.Helper()
	counts := s.recordCounts()
	missing := 0
	for _, id := range runs {
		if counts[id] != 1 {
			missing++
			t.Errorf("run %s has %d records, want 1", id, counts[id])
		}
	}
	t.Logf("%d runs checked, %d without exactly one record", len(runs), missing)
}

// historyLogLines counts the daemon's log lines about history, and fails
// the test for any line that is not JSON.
func historyLogLines(t *testing.T, d *proc) int {
	t.Helper()
	n := 0
	for _, l := range lines(d.stderr()) {
		if !strings.HasPrefix(l, "{") {
			t.Errorf("daemon log line is not JSON: %q", l)
		}
		if strings.Contains(l, `"msg":"history`) {
			n++
		}
	}
	return n
}

func TestE2EDiskFullLosesNoRecordOnceSpaceReturns(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	if os.Geteuid() != 0 {
		t.Fatal("mounting a tmpfs needs root: run the tests as root, as CI does")
	}
	t.Parallel()
	// Too small for a spool: the records wait in memory only.
	s, d, fires, filler, _ := fullDiskDaemon(t, "2m", "")
	n := historyLogLines(t, d)
	t.Logf("%d history log lines while the disk was full", n)
	if n > 10 {
		t.Errorf("%d history log lines while the disk was full, want a few (rate-limited)", n)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "every fire recorded once space returned", func() bool { return s.firesRecordedOnce(fires) })
	stopDaemons(t, d)
	checkOneRecordEach(t, s, fired(t, fires))
	for _, l := range lines(d.stderr()) {
		if strings.Contains(l, `"msg":"history`) {
			t.Log(l)
		}
	}
	if !strings.Contains(d.stderr(), `"msg":"history degraded`) || !strings.Contains(d.stderr(), `"msg":"history recovered`) {
		t.Errorf("no degraded and recovered log records; stderr:\n%s", d.stderr())
	}
}

// fullDiskDaemon starts a daemon firing the tick job of firingJob with its
// state dir on a tmpfs of size, waits for two recorded runs, fills the
// disk and waits for five fires on it and for status to say history is
// degraded. It returns the filler to remove, and how many fires came
// before the disk was full.
func fullDiskDaemon(t *testing.T, size, durability string) (s *sandbox, d *proc, fires, filler string, before int) {
	t.Helper()
	fires = filepath.Join(t.TempDir(), "fires")
	s = newSandbox(t, durability+firingJob(fires))
	if err := os.MkdirAll(s.state, 0o700); err != nil {
		t.Fatal(err)
	}
	mount(t, s.state, "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs")
	d = s.cv("daemon", "--log-format", "json")
	waitFor(t, 15*time.Second, "two recorded runs", func() bool { return len(s.recordCountsSoFar()) >= 2 })
	filler = filepath.Join(s.state, "filler")
	fillDisk(t, filler)
	before = len(fired(t, fires))
	waitFor(t, 20*time.Second, "five fires on the full disk", func() bool { return len(fired(t, fires)) >= before+5 })
	waitFor(t, 10*time.Second, "status saying history is degraded", func() bool {
		_, _, stderr := s.runCV(10*time.Second, "status")
		return strings.Contains(stderr, "history degraded since ")
	})
	return s, d, fires, filler, before
}

// fillDisk writes path until the file system is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill: %v", err)
			}
			return
		}
	}
}

// TestE2EDiskFullSupervisorKilledLosesNoRecord: the runs of a full disk
// have their records held, their lock released, and the supervisor is
// SIGKILLed before space returns. The next supervisor still records each
// run once, and each run that ended before the kill with its outcome.
// In both durability modes: under process the spool is never synced.
func TestE2EDiskFullSupervisorKilledLosesNoRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	if os.Geteuid() != 0 {
		t.Fatal("mounting a tmpfs needs root: run the tests as root, as CI does")
	}
	t.Parallel()
	eachDurability(t, diskFullSupervisorKilled)
}

func diskFullSupervisorKilled(t *testing.T, durability string) {
	// Room for the history and two processes' spool reservations.
	s, d, fires, filler, before := fullDiskDaemon(t, "16m", durability)

	_ = syscall.Kill(-d.pid(), syscall.SIGKILL)
	d.wait(10 * time.Second)
	// A run in flight is in its own group: it outlives the kill.
	waitFor(t, 10*time.Second, "the killed supervisor's runs to exit", func() bool { return len(s.tagged()) == 0 })
	runs := fired(t, fires)
	t.Logf("%d fires on the full disk before the kill", len(runs)-before)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	next := s.cv("daemon", "--log-format", "json")
	// Bounded but not fatal: a record that never comes is reported below.
	for deadline := time.Now().Add(20 * time.Second); !s.firesRecordedOnce(fires) && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
	}
	stopDaemons(t, next)
	checkOneRecordEach(t, s, fired(t, fires))
	// A run ended before the kill if a later run took its lock, or if the
	// killed supervisor logged its end: only the last may be cut short.
	last := runs[len(runs)-1]
	lastEnded := slices.ContainsFunc(lines(d.stderr()), func(l string) bool {
		return strings.Contains(l, `"msg":"run finished"`) && strings.Contains(l, `"run_id":"`+last+`"`)
	})
	got := s.runsByID()
	t.Logf("the last run before the kill: end logged %v, recorded %s %q", lastEnded, got[last].Outcome, got[last].Reason)
	for i, id := range runs {
		r, ok := got[id]
		if ok && r.Outcome != run.OK && (id != last || lastEnded || r.Outcome != run.Interrupted) {
			t.Errorf("run %s (%d of %d before the kill): %s %q, want ok", id, i+1, len(runs), r.Outcome, r.Reason)
		}
	}
}

// TestE2EHistoryDeletedMidRunLosesNoRecord: history.db deleted under a
// daemon is copied back to its path from the file the daemon still has
// open, at its next write: every run, before and after, has its record.
func TestE2EHistoryDeletedMidRunLosesNoRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	t.Parallel()
	fires := filepath.Join(t.TempDir(), "fires")
	s := newSandbox(t, firingJob(fires))
	d := s.cv("daemon", "--log-format", "json")
	waitFor(t, 15*time.Second, "two recorded runs", func() bool { return len(s.recordCountsSoFar()) >= 2 })

	if err := os.Remove(filepath.Join(s.state, "history.db")); err != nil {
		t.Fatal(err)
	}
	after := len(fired(t, fires))
	waitFor(t, 20*time.Second, "four fires after the deletion", func() bool { return len(fired(t, fires)) >= after+4 })
	stopDaemons(t, d)
	checkOneRecordEach(t, s, fired(t, fires))
	if !strings.Contains(d.stderr(), "its records are back at its path") {
		t.Errorf("no log record of the database copied back; stderr:\n%s", d.stderr())
	}
	historyLogLines(t, d)
}
