package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// auditVersionJobs fires every 2 s, then (editVersions) every 3 s: most
// slots of either schedule are no slots of the other.
const auditVersionJobs = `jobs:
  - name: tick
    schedule: "@every 2s"
    command: "true"
    timeout: 5s
`

// editVersions rewrites s's schedule and reloads its daemon d with SIGHUP
// (the watcher of jobs.yaml may reload first: the second finds nothing
// changed), and returns when d has logged its reload.
func (s *sandbox) editVersions(d *proc) {
	s.t.Helper()
	before := strings.Count(d.stderr(), `"msg":"reloaded"`)
	body := strings.Replace(readFile(s.t, s.config), `"@every 2s"`, `"@every 3s"`, 1)
	if err := os.WriteFile(s.config, []byte(body), 0o644); err != nil {
		s.t.Fatal(err)
	}
	if err := syscall.Kill(d.pid(), syscall.SIGHUP); err != nil {
		s.t.Fatal(err)
	}
	waitFor(s.t, 10*time.Second, "the reload", func() bool { return strings.Count(d.stderr(), `"msg":"reloaded"`) > before })
}

// auditSlots runs `cronvisor audit --json` on s and returns its exit
// code, its slots (class by slot, in RFC 3339), its summary (stderr) and
// its raw lines.
func (s *sandbox) auditSlots() (int, map[string]string, string, []string) {
	s.t.Helper()
	code, out, stderr := s.runCV(60*time.Second, "audit", "--json")
	classes := map[string]string{}
	for _, l := range lines(out) {
		var line struct{ Slot, Class string }
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			s.t.Fatalf("audit --json line %q: %v", l, err)
		}
		classes[line.Slot] = line.Class
	}
	return code, classes, strings.TrimSpace(stderr), lines(out)
}

// checkVersionedAudit checks audit on s after an edit from @every 2s to
// @every 3s, reloaded from edited to reloaded, and a trigger: exit 0,
// nothing missed or duplicated, no extra run but between edited and
// reloaded (a host still on the old schedule after another's reload),
// slots of both schedules judged, and the trigger's run recorded manual
// and judged nowhere.
func checkVersionedAudit(t *testing.T, s *sandbox, edited, reloaded time.Time, triggered string) {
	t.Helper()
	code, classes, summary, raw := s.auditSlots()
	if code != 0 || !strings.Contains(summary, "missed 0, duplicated 0") {
		t.Fatalf("audit: exit %d, %s, want exit 0, missed 0, duplicated 0:\n%s", code, summary, strings.Join(raw, "\n"))
	}
	var old, cur int
	for slot, class := range classes {
		at, err := time.Parse(time.RFC3339Nano, slot)
		if err != nil {
			t.Fatalf("slot %q: %v", slot, err)
		}
		if class == "extra" && (at.Before(edited) || at.After(reloaded)) {
			t.Errorf("slot %s: extra, want no run off the schedules in force:\n%s", slot, strings.Join(raw, "\n"))
		}
		// A slot is judged ran, or skipped when another run (the
		// trigger's) held the lock at its instant.
		sec, judged := at.Unix(), class == "ran" || class == "skipped"
		switch {
		case at.Before(edited) && sec%2 == 0 && sec%3 != 0 && judged:
			old++
		case at.After(edited) && sec%3 == 0 && sec%2 != 0 && judged:
			cur++
		}
	}
	if old < 2 || cur < 2 {
		t.Errorf("audit judged %d slots of the old schedule only and %d of the new only, want >= 2 each:\n%s", old, cur, strings.Join(raw, "\n"))
	}
	for _, r := range s.historyJSON("--job", "tick") {
		if r.RunID == triggered && !r.Manual {
			t.Errorf("the trigger's record %s says manual false", r.RunID)
		}
		if r.RunID == triggered {
			if _, judged := classes[r.ScheduledAt.Format(time.RFC3339Nano)]; judged {
				t.Errorf("the trigger's run %s was judged as a slot", r.RunID)
			}
		}
	}
	t.Logf("audit: %s (%d slots judged)", summary, len(classes))
}

// triggerTick triggers tick on s's daemon and returns the run's id. A
// trigger that meets a scheduled run holding the lock is skipped (the
// overlap policy applies to it): it is tried again, up to five times.
func (s *sandbox) triggerTick() string {
	s.t.Helper()
	for try := 1; ; try++ {
		code, out, stderr := s.runCV(10*time.Second, "trigger", "tick")
		if f := strings.Fields(out); code == 0 && strings.HasPrefix(out, "triggered tick: run ") && len(f) >= 4 {
			return f[3]
		}
		if try == 5 || code != 0 || !strings.Contains(out, "skipped: lock held") {
			s.t.Fatalf("trigger (try %d): exit %d, %q %q", try, code, out, stderr)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// TestE2EAuditAfterEditAndTrigger: a daemon runs a job every 2 s; its
// schedule is edited to every 3 s and reloaded with SIGHUP mid-window,
// and the job is triggered by hand. audit then judges each slot against
// the schedule in force at its instant, leaves the trigger out, and exits
// 0 with missed 0 and duplicated 0.
func TestE2EAuditAfterEditAndTrigger(t *testing.T) {
	if testing.Short() {
		t.Skip("a daemon runs for about twenty seconds")
	}
	t.Parallel()
	s := newSandbox(t, auditVersionJobs)
	d := s.startDaemon()
	time.Sleep(7 * time.Second)
	edited := time.Now()
	s.editVersions(d)
	time.Sleep(3 * time.Second)
	id := s.triggerTick()
	time.Sleep(10 * time.Second) // new-only slots come every 6 s
	checkVersionedAudit(t, s, edited, edited, id)
	stopDaemons(t, d)
}

// TestE2EFleetAuditAfterEditAndTrigger is the same on two hosts sharing
// their locks and history on PostgreSQL: both reload the edit, one
// triggers, and audit of the shared history exits 0.
func TestE2EFleetAuditAfterEditAndTrigger(t *testing.T) {
	if testing.Short() {
		t.Skip("two daemons run for about twenty seconds")
	}
	t.Parallel()
	srv := sharedSQLServer(t, "postgres")
	db, _ := srv.newDB(t)
	a, b := fleetHostWith(t, srv, db, auditVersionJobs), fleetHostWith(t, srv, db, auditVersionJobs)
	da, dbb := a.startHost("host-a"), b.startHost("host-b")
	time.Sleep(7 * time.Second)
	edited := time.Now()
	a.editVersions(da)
	b.editVersions(dbb)
	reloaded := time.Now()
	time.Sleep(3 * time.Second)
	id := b.triggerTick()
	time.Sleep(10 * time.Second) // new-only slots come every 6 s
	waitFor(t, 10*time.Second, "both outboxes shipped", func() bool { return a.outbox() == 0 && b.outbox() == 0 })
	checkVersionedAudit(t, a, edited, reloaded, id)
	stopDaemons(t, da, dbb)
}
