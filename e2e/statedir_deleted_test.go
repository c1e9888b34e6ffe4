package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// TestE2EStateDirDeletedUnderDaemon: `rm -rf` of the state dir under a
// running daemon, while a run of `long` holds its lock on a file that
// then has no name. The daemon says so (ERROR, naming the dir) and makes
// the dir again within a second; `cronvisor run long` is refused (the
// lock taken again on the new file), and so is a second daemon, naming
// the first; the first goes on firing. At the end `history --json` holds
// every run the first daemon started, before and after the deletion,
// once each and ended, one record per slot; no two runs of `long`
// overlapped; the run in flight kept its whole log; the first daemon
// stops cleanly.
func TestE2EStateDirDeletedUnderDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules; runs in the full suite")
	}
	t.Parallel()
	s := newSandbox(t, `jobs:
  - {name: tick, schedule: "* * * * * *", command: "true", timeout: 5s}
  - name: long
    schedule: "* * * * * *"
    timeout: 10s
    command: echo "start $(date +%s%N) $$" >> spans.txt; echo begun; sleep 3; echo done; echo "end $(date +%s%N) $$" >> spans.txt
`)
	first := s.startDaemon()
	waitFor(t, 10*time.Second, "two tick runs and a long one begun", func() bool {
		return strings.Count(first.stderr(), `"msg":"run finished","job":"tick"`) >= 2 &&
			strings.Contains(first.stderr(), `"msg":"run started","job":"long"`)
	})
	before := s.historyJSON()
	deleted := time.Now()
	if err := os.RemoveAll(s.state); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the state dir made again", func() bool {
		return strings.Contains(first.stderr(), `"msg":"the state dir is made again"`)
	})
	noticed := time.Since(deleted)
	checkDeletionLogged(t, first, s.state)

	// The run of long in flight holds its lock on the deleted file; the
	// new file at the path is held too.
	code, stdout, stderr := s.runCV(15*time.Second, "run", "long")
	if strings.Contains(stdout, "begun") || !strings.Contains(stderr, "lock held by pid") {
		t.Errorf("run long beside the run in flight: exit %d, stdout %q, stderr %q; want it skipped, lock held", code, stdout, stderr)
	}
	second := s.cv("daemon", "--log-format", "json")
	if code := second.wait(15 * time.Second); code != 1 ||
		!strings.Contains(second.stderr(), "another cronvisor (pid "+strconv.Itoa(first.pid())+", user root (uid 0)) already supervises the state dir "+s.state) {
		t.Errorf("second daemon after the deletion: exit %d, stderr:\n%s\nwant exit 1 naming pid %d", code, second.stderr(), first.pid())
	}
	afterNotice := strings.Count(first.stderr(), `"msg":"run finished","job":"tick"`)
	waitFor(t, 10*time.Second, "three more tick runs", func() bool {
		return strings.Count(first.stderr(), `"msg":"run finished","job":"tick"`) >= afterNotice+3
	})
	stopDaemons(t, first)
	t.Logf("deletion noticed and mended %v after the rm", noticed)
	checkEveryRunKept(t, s, first, before, deleted)
	if n := checkNoOverlap(t, filepath.Join(s.dir, "spans.txt"), true); n < 2 {
		t.Errorf("%d runs of long, want 2 or more", n)
	}
}

// checkDeletionLogged checks that the daemon logged the deletion as an
// ERROR naming the state dir.
func checkDeletionLogged(t *testing.T, d *proc, state string) {
	t.Helper()
	for _, r := range daemonLog(t, d) {
		if r["level"] == "ERROR" && r["state_dir"] == state && strings.Contains(r["msg"].(string), "state dir was deleted") {
			return
		}
	}
	t.Errorf("no ERROR naming %s in the daemon's log:\n%s", state, d.stderr())
}

// checkEveryRunKept checks history after the daemon stopped: every run
// it started is there once and ended, the records from before the
// deletion are all there, no slot of a job has two records, and the run
// of long in flight across the deletion kept its whole log.
func checkEveryRunKept(t *testing.T, s *sandbox, d *proc, before []run.Record, deleted time.Time) {
	t.Helper()
	recs := s.historyJSON()
	byID := map[string]run.Record{}
	slots := map[string]string{}
	for _, r := range recs {
		if _, dup := byID[r.RunID]; dup {
			t.Errorf("run %s recorded twice", r.RunID)
		}
		byID[r.RunID] = r
		if r.Manual {
			continue
		}
		key := r.Job + " " + r.ScheduledAt.UTC().Format(time.RFC3339Nano)
		if other, dup := slots[key]; dup {
			t.Errorf("slot %s has two records: %s and %s", key, other, r.RunID)
		}
		slots[key] = r.RunID
	}
	for _, r := range before {
		if _, ok := byID[r.RunID]; !ok {
			t.Errorf("record %s (%s, %s) from before the deletion is lost", r.RunID, r.Job, r.Outcome)
		}
	}
	started := 0
	for _, l := range daemonLog(t, d) {
		if l["msg"] != "run started" {
			continue
		}
		started++
		id, _ := l["run_id"].(string)
		if r, ok := byID[id]; !ok || r.Outcome == "running" {
			t.Errorf("run %s started by the daemon: record %+v, found %v; want it ended", id, r, ok)
		}
	}
	checkSpanningLog(t, d, byID, deleted)
	t.Logf("%d records, %d from before the deletion, %d runs started", len(recs), len(before), started)
}

// checkSpanningLog checks the log of the run of long that was running at
// the deletion: both its lines, begun before and done after.
func checkSpanningLog(t *testing.T, d *proc, byID map[string]run.Record, deleted time.Time) {
	t.Helper()
	began := map[string]bool{}
	for _, l := range daemonLog(t, d) {
		at, _ := time.Parse(time.RFC3339Nano, l["time"].(string))
		id, _ := l["run_id"].(string)
		switch {
		case l["job"] != "long":
		case l["msg"] == "run started" && at.Before(deleted):
			began[id] = true
		case l["msg"] == "run finished" && at.After(deleted) && began[id]:
			r := byID[id]
			got, err := os.ReadFile(r.LogPath)
			if r.Outcome != run.OK || err != nil || !strings.Contains(string(got), "begun") || !strings.Contains(string(got), "done") {
				t.Errorf("run %s across the deletion: %s, log %q: %q (%v); want ok, begun and done", id, r.Outcome, r.LogPath, got, err)
			}
			return
		}
	}
	t.Errorf("no run of long was running at the deletion; the test proves nothing of its lock and log:\n%s", d.stderr())
}
