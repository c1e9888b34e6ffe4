package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A state dir that turns read-only under a running daemon.

// mount runs mount(8) with args, unmounting target (lazily) at cleanup.
// Register it before starting a daemon on target, so that the cleanup runs
// after the daemon's kill.
func mount(t *testing.T, target string, args ...string) {
	t.Helper()
	if out, err := exec.Command("mount", append(args, target)...).CombinedOutput(); err != nil {
		t.Fatalf("mount %v %s: %v: %s", args, target, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", target).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", target, err, out)
		}
	})
}

// remount changes the options of the mount at target.
func remount(t *testing.T, target, opts string) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", "remount,"+opts, target).CombinedOutput(); err != nil {
		t.Fatalf("remount %s %s: %v: %s", opts, target, err, out)
	}
}

// readOnlyBesideLocks makes s's state dir a read-only tmpfs whose locks/
// stays writable (a bind mount of a directory in outside): history
// cannot even be created there, and only the locks work.
func readOnlyBesideLocks(t *testing.T, s *sandbox, outside string) {
	t.Helper()
	locks := filepath.Join(s.state, "locks")
	if err := os.MkdirAll(s.state, 0o700); err != nil {
		t.Fatal(err)
	}
	mount(t, s.state, "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs")
	if err := os.Mkdir(locks, 0o700); err != nil {
		t.Fatal(err)
	}
	lockSrc := filepath.Join(outside, "locks")
	if err := os.Mkdir(lockSrc, 0o700); err != nil {
		t.Fatal(err)
	}
	mount(t, locks, "--bind", lockSrc)
	remount(t, s.state, "ro")
}

func TestE2EReadOnlyStateDirKeepsJobsRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	if os.Geteuid() != 0 {
		t.Fatal("mounting needs root: run the tests as root, as CI does")
	}
	t.Parallel()
	outside := t.TempDir()
	fires := filepath.Join(outside, "fires")
	s := newSandbox(t, firingJob(fires))
	readOnlyBesideLocks(t, s, outside)
	d := s.cv("daemon", "--log-format", "json")
	waitFor(t, 20*time.Second, "three fires with history read-only", func() bool { return len(fired(t, fires)) >= 3 })
	if !strings.Contains(d.stderr(), `"msg":"history degraded`) {
		t.Errorf("no history degraded record; stderr:\n%s", d.stderr())
	}
	// cursors/ cannot be made: one warning, not one a fire (the journal
	// is tried again only after a minute).
	if n := strings.Count(d.stderr(), `"msg":"locks: cursor journal cannot be written`); n != 1 {
		t.Errorf("%d cursor journal warnings over %d fires; want 1; stderr:\n%s", n, len(fired(t, fires)), d.stderr())
	}
	remount(t, s.state, "rw")
	waitFor(t, 15*time.Second, "every fire recorded once the state dir is writable", func() bool { return s.firesRecordedOnce(fires) })
	stopDaemons(t, d)
	checkOneRecordEach(t, s, fired(t, fires))
	for _, r := range s.historyJSON() {
		if r.Outcome != "ok" {
			t.Errorf("run %s: %s %q, want ok", r.RunID, r.Outcome, r.Reason)
		}
	}
}

func TestE2EReadOnlyLocksFailClosed(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: seconds of real schedules, deadlines and retries; runs in the full suite")
	}
	if os.Geteuid() != 0 {
		t.Fatal("mounting needs root: run the tests as root, as CI does")
	}
	t.Parallel()
	fires := filepath.Join(t.TempDir(), "fires")
	s := newSandbox(t, firingJob(fires))
	locks := filepath.Join(s.state, "locks")
	if err := os.MkdirAll(locks, 0o700); err != nil {
		t.Fatal(err)
	}
	mount(t, locks, "--bind", locks)
	remount(t, locks, "ro,bind")
	d := s.cv("daemon", "--log-format", "json")
	waitFor(t, 20*time.Second, "three refused fires", func() bool { return len(s.recordCountsSoFar()) >= 3 })
	stopDaemons(t, d)
	if runs := fired(t, fires); len(runs) != 0 {
		t.Errorf("%d runs without their lock", len(runs))
	}
	for _, r := range s.historyJSON() {
		if r.Outcome != "error" || !strings.HasPrefix(r.Reason, "cannot take lock: ") {
			t.Errorf("record %s: %s %q, want error \"cannot take lock: ...\"", r.RunID, r.Outcome, r.Reason)
		}
	}
	if !strings.Contains(d.stderr(), `"reason":"cannot take lock: `) {
		t.Errorf("no log record with the reason; stderr:\n%s", d.stderr())
	}
}

// TestE2EReadOnlyRunEndHeldAtExitIsRecovered: a run that ends while the
// state dir is read-only has its records only in memory, and the process
// exits (as a SIGKILL would end it) before the store takes them. Its lock
// record stays in flight, so the next supervisor records the run, once,
// as interrupted.
func TestE2EReadOnlyRunEndHeldAtExitIsRecovered(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("mounting needs root: run the tests as root, as CI does")
	}
	t.Parallel()
	outside := t.TempDir()
	fires := filepath.Join(outside, "fires")
	s := newSandbox(t, `jobs:
  - {name: once, schedule: "0 0 1 1 *", timeout: 10s, command: 'printf "%s\n" "$CRONVISOR_RUN_ID" >> `+fires+`'}
`)
	readOnlyBesideLocks(t, s, outside)
	code, _, stderr := s.runCV(20*time.Second, "run", "once")
	runs := fired(t, fires)
	if code != 0 || len(runs) != 1 {
		t.Fatalf("run: exit %d, %d fires; stderr:\n%s", code, len(runs), stderr)
	}
	if !strings.Contains(stderr, "history records lost at exit") || !strings.Contains(stderr, runs[0]) {
		t.Errorf("the unrecorded end is not reported with its run; stderr:\n%s", stderr)
	}
	remount(t, s.state, "rw")
	d := s.cv("daemon", "--log-format", "json")
	waitFor(t, 15*time.Second, "the run recorded by the next supervisor", func() bool { return s.recordCountsSoFar()[runs[0]] == 1 })
	stopDaemons(t, d)
	checkOneRecordEach(t, s, runs)
	for _, r := range s.historyJSON() {
		if r.RunID == runs[0] && (r.Outcome != "interrupted" || !strings.Contains(r.Reason, "died")) {
			t.Errorf("run %s: %s %q, want interrupted by its supervisor's death", r.RunID, r.Outcome, r.Reason)
		}
	}
}
