package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/proc/cgroup"
)

// hierarchy is this host's cgroup v2 hierarchy, where runs get their
// leaves: the tests run as root on a host where it is usable (CI's
// included), so its absence is a failure, not a skip.
func hierarchy(t *testing.T) *cgroup.Hierarchy {
	t.Helper()
	h, err := cgroup.Detect()
	if err != nil {
		t.Fatalf("cgroup v2 must be usable here (the tests run as root): %v", err)
	}
	return h
}

// onlyRecord waits for the one record of job to say how the run ended,
// and returns it.
func (s *sandbox) onlyRecord(job string, timeout time.Duration) run.Record {
	s.t.Helper()
	var recs []run.Record
	waitFor(s.t, timeout, "the record of "+job, func() bool {
		recs = s.historyJSON("--job", job)
		return len(recs) > 0 && recs[0].Outcome != run.Running
	})
	if len(recs) != 1 {
		s.t.Fatalf("records of %s: %+v, want one", job, recs)
	}
	return recs[0]
}

// TestE2ERootJobLeavingItsCgroup: a root job that moves itself to the
// root cgroup (echo $$ > MOUNT/cgroup.procs) and sleeps is logged (a WARN
// naming the job, the run, the pid and where it went) and still ended at
// its 2 s deadline by its process group and tag: recorded timeout, no
// process of it left.
func TestE2ERootJobLeavingItsCgroup(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	h := hierarchy(t)
	arg := sleepArg("64.1")
	s := newSandbox(t, `jobs:
  - name: leave
    schedule: "@yearly"
    timeout: 2s
    kill_grace: 2s
    command: "echo $$ > `+filepath.Join(h.Mount, "cgroup.procs")+`; sleep `+arg+`"
`)
	t.Cleanup(func() { killCmdline(arg) })
	d := s.startDaemon()
	if code, out, errOut := s.runCV(10*time.Second, "trigger", "leave"); code != 0 {
		t.Fatalf("trigger: exit %d\n%s%s", code, out, errOut)
	}
	waitFor(t, 5*time.Second, "the job's sleep", func() bool { return sleeps(arg) == 1 })
	r := s.onlyRecord("leave", 10*time.Second)
	if r.Outcome != run.Timeout {
		t.Errorf("recorded %s (%q), want timeout", r.Outcome, r.Reason)
	}
	// From the fire (its slot: the deadline is counted from before the
	// start, which a loaded machine can delay) to the end.
	if took := r.EndedAt.Sub(r.ScheduledAt); took < 2*time.Second || took > 3500*time.Millisecond {
		t.Errorf("the run ended %v after its fire, want at its 2 s deadline (SIGTERM ends sleep)", took)
	}
	if n := sleeps(arg); n != 0 {
		t.Errorf("%d sleeps of the run left after its record", n)
	}
	var warned bool
	for _, rec := range daemonLog(t, d) {
		if rec["level"] == "WARN" && strings.Contains(rec["msg"].(string), "left its cgroup leaf") {
			warned = rec["job"] == "leave" && rec["run_id"] == r.RunID && rec["pid"] != nil && rec["moved_to"] == h.Mount
			t.Logf("daemon log: %v", rec)
		}
	}
	if !warned {
		t.Errorf("no WARN naming job leave, run %s, a pid and moved_to %s in the daemon's log:\n%s", r.RunID, h.Mount, tail(d.stderr(), 20))
	}
	stopDaemons(t, d)
}

// TestE2ERootJobWithSubCgroups: a root job that makes a cgroup below its
// run's leaf and moves into it leaves nothing behind: whether it exits
// (ok) or is ended at its deadline there (timeout), the run's leaf is
// removed whole, with no warning.
func TestE2ERootJobWithSubCgroups(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	h := hierarchy(t)
	arg := sleepArg("64.2")
	into := `L=` + h.Mount + `$(sed -n 's/^0:://p' /proc/self/cgroup); mkdir -p $L/sub/deeper && echo $$ > $L/sub/deeper/cgroup.procs && `
	s := newSandbox(t, `jobs:
  - name: subok
    schedule: "@yearly"
    timeout: 10s
    command: "`+into+`sleep 0.2"
  - name: subslow
    schedule: "@yearly"
    timeout: 1s
    kill_grace: 1s
    command: "`+into+`sleep `+arg+`"
`)
	t.Cleanup(func() { killCmdline(arg) })
	d := s.startDaemon()
	for _, job := range []string{"subok", "subslow"} {
		if code, out, errOut := s.runCV(10*time.Second, "trigger", job); code != 0 {
			t.Fatalf("trigger %s: exit %d\n%s%s", job, code, out, errOut)
		}
	}
	for job, want := range map[string]run.Outcome{"subok": run.OK, "subslow": run.Timeout} {
		r := s.onlyRecord(job, 10*time.Second)
		if r.Outcome != want {
			t.Errorf("%s recorded %s (%q), want %s", job, r.Outcome, r.Reason, want)
		}
		leaf := filepath.Join(h.Root, "run-"+r.RunID)
		if _, err := os.Stat(leaf); !os.IsNotExist(err) {
			t.Errorf("%s: the run's leaf %s is left behind (%v)", job, leaf, err)
		}
	}
	if n := sleeps(arg); n != 0 {
		t.Errorf("%d sleeps of subslow left after its record", n)
	}
	if strings.Contains(d.stderr(), "left behind") || strings.Contains(d.stderr(), "left its cgroup leaf") {
		t.Errorf("the daemon warned of a run that stayed in its leaf:\n%s", tail(d.stderr(), 20))
	}
	stopDaemons(t, d)
}

// TestE2ERootJobLeavingItsCgroupOutlivesItsSupervisor: the same escape
// under a keeper: the daemon is SIGKILLed 0.5 s into a run that moved
// itself to the root cgroup, and the keeper still ends it at its 2 s
// deadline by process group (nothing of it left by start + timeout +
// kill_grace + 1 s); the next daemon records it once, timeout.
func TestE2ERootJobLeavingItsCgroupOutlivesItsSupervisor(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	h := hierarchy(t)
	arg := sleepArg("64.3")
	job := func(schedule string) string {
		return `jobs:
  - name: leave
    schedule: "` + schedule + `"
    timeout: 2s
    kill_grace: 1s
    command: "echo $$ > ` + filepath.Join(h.Mount, "cgroup.procs") + `; sleep ` + arg + `"
`
	}
	s := newSandbox(t, job("* * * * * *"))
	t.Cleanup(func() { killCmdline(arg) })
	runID, started := s.killDaemonInto(500 * time.Millisecond)
	if sleeps(arg) != 1 {
		t.Fatal("the run did not outlive its supervisor")
	}
	bound := started.Add(2*time.Second + time.Second + time.Second)
	waitFor(t, time.Until(bound)+time.Second, "no process of the run", func() bool { return len(withCmdline(arg)) == 0 })
	goneAt := time.Now()
	if late := goneAt.Sub(bound); late > 0 {
		t.Errorf("the run's processes were gone %v after start + timeout + kill_grace + 1 s", late)
	}
	// The next daemon must not fire the job again: it only records.
	if err := os.WriteFile(s.config, []byte("state_dir: state\n"+job("@yearly")), 0o644); err != nil {
		t.Fatal(err)
	}
	d := s.startDaemon()
	r := s.recordOf(runID, 10*time.Second)
	t.Logf("gone %v after the run's start; record %+v", goneAt.Sub(started).Round(time.Millisecond), r)
	if r.Outcome != run.Timeout {
		t.Errorf("run recorded %s (%q), want timeout", r.Outcome, r.Reason)
	}
	stopDaemons(t, d)
}
