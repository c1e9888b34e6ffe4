package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/run"
	"cronvisor/internal/proc/cgroup"
)

// cutMarker is the line that marks a log's cut (run.LogCutMarker).
var cutMarker = regexp.MustCompile(`(?m)^\.\.\. \[cronvisor: (more than )?(\d+) bytes cut\] \.\.\.$`)

// TestE2EKeeperKeepsLogLimit: a job that prints 50 MB after its daemon
// was SIGKILLed: its keeper keeps the log within log_limit (1 MiB) and a
// marked cut, the supervisor's first line at its head and the last line
// at its end; the next daemon records the run ok.
func TestE2EKeeperKeepsLogLimit(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	arg := sleepArg("1.2")
	s := newSandbox(t, "")
	done := filepath.Join(s.dir, "done")
	line := strings.Repeat("0123456789", 10)[:99] // 100 bytes with its newline
	body := `history: {log_limit: 1MiB}
jobs:
  - name: chatty
    schedule: "* * * * * *"
    timeout: 1m
    command: "[ -e ` + done + ` ] && exit 0; touch ` + done + `; echo first; sleep ` + arg + `; yes ` + line + ` | head -c 50000000; echo; echo last"
`
	if err := os.WriteFile(s.config, []byte("state_dir: state\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killCmdline(arg) })
	runID, _ := s.killDaemonInto(300 * time.Millisecond)
	end := filepath.Join(s.state, "runs", runID+".end")
	waitFor(t, 60*time.Second, "the keeper's end of the run", func() bool { _, err := os.Stat(end); return err == nil })
	b, err := os.ReadFile(filepath.Join(s.state, "logs", "chatty", runID+".log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	m := cutMarker.FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("the log of 50 MB of output has no cut marker; %d bytes, its end:\n%s", len(b), tail(log, 3))
	}
	if limit := 1 << 20; len(b) > limit+len(m[0])+1 {
		t.Errorf("the log is %d bytes, over log_limit %d and its marker", len(b), limit)
	}
	if cut, _ := strconv.Atoi(m[2]); m[1] != "" || cut < 49_000_000 {
		t.Errorf("marker %q, want the exact count of about 50 MB cut", m[0])
	}
	if !strings.HasPrefix(log, "stdout | first\n") || !strings.HasSuffix(log, "stdout | last\n") {
		t.Errorf("the log does not keep its head and tail: starts %q, ends %q", log[:min(40, len(log))], tail(log, 2))
	}
	for _, l := range lines(log) {
		if !strings.HasPrefix(l, "stdout | ") && l != m[0] {
			t.Fatalf("the log holds a line %q: not an entry nor the marker", l[:min(len(l), 80)])
		}
	}
	d := s.startDaemon()
	if r := s.recordOf(runID, 10*time.Second); r.Outcome != run.OK {
		t.Errorf("the run recorded %s (%q), want ok", r.Outcome, r.Reason)
	}
	stopDaemons(t, d)
}

// mountTmpfs mounts a tmpfs of size bytes on the sandbox's state dir,
// made 0700 as cronvisor wants it; the cleanup detaches it (lazily: it
// runs before the check that nothing of the test survives).
func (s *sandbox) mountTmpfs(size int) {
	s.t.Helper()
	if err := os.MkdirAll(s.state, 0o700); err != nil {
		s.t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", s.state, "tmpfs", 0, "mode=0700,size="+strconv.Itoa(size)); err != nil {
		s.t.Fatalf("mounting a tmpfs on %s (this test needs root): %v", s.state, err)
	}
	s.t.Cleanup(func() { _ = unix.Unmount(s.state, unix.MNT_DETACH) })
}

// TestE2EKeeperEndOnAFullDisk: the state dir is an 8 MiB tmpfs that a
// run fills after its daemon was SIGKILLed; at its deadline the keeper
// still writes the run's end (its room was reserved at the hand-over),
// the next daemon's log says the disk was full, and the record keeps what
// the keeper saw: timeout, exit 143, not interrupted.
func TestE2EKeeperEndOnAFullDisk(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	arg := sleepArg("30.5")
	s := newSandbox(t, "")
	done, fill := filepath.Join(s.dir, "done"), filepath.Join(s.state, "fill")
	body := `jobs:
  - name: filler
    schedule: "* * * * * *"
    timeout: 3s
    kill_grace: 1s
    command: "[ -e ` + done + ` ] && exit 0; touch ` + done + `; sleep 0.5; head -c 64000000 /dev/zero >` + fill + `; sleep ` + arg + `"
`
	if err := os.WriteFile(s.config, []byte("state_dir: state\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	s.mountTmpfs(8 << 20)
	t.Cleanup(func() { killCmdline(arg) })
	runID, _ := s.killDaemonInto(200 * time.Millisecond)
	end := filepath.Join(s.state, "runs", runID+".end")
	waitFor(t, 15*time.Second, "the keeper's end of the run", func() bool { _, err := os.Stat(end); return err == nil })
	var st unix.Statfs_t
	if err := unix.Statfs(s.state, &st); err != nil || st.Bavail > 4 {
		t.Fatalf("the state dir's disk was not full when the run ended: %d blocks free (%v)", st.Bavail, err)
	}
	if err := os.Remove(fill); err != nil { // the operator frees the disk for the next daemon
		t.Fatal(err)
	}
	d := s.startDaemon()
	r := s.recordOf(runID, 10*time.Second)
	if r.Outcome != run.Timeout || !strings.Contains(r.Reason, "exceeded timeout 3s") || r.ExitCode == nil || *r.ExitCode != 143 {
		t.Errorf("the run recorded %s exit %v (%q), want timeout, exit 143", r.Outcome, r.ExitCode, r.Reason)
	}
	if ms := r.DurationMS(); ms < 2500 || ms > 4500 {
		t.Errorf("the run lasted %d ms, want its timeout 3s (and its SIGTERM's effect)", ms)
	}
	stopDaemons(t, d)
	logged := d.stderr()
	if !strings.Contains(logged, "the keeper of a dead supervisor's run reports") || !strings.Contains(logged, "no space left on device") {
		t.Errorf("the next daemon's log does not say the disk was full; it says:\n%s", tail(logged, 20))
	}
}

// keeperPIDs lists the live keepers of the sandbox's runs.
func (s *sandbox) keeperPIDs() []int {
	var out []int
	for _, p := range processes() {
		if strings.HasPrefix(p.cmdline, "cronvisor-keeper ") && strings.Contains(p.cmdline, " -ends "+s.state+"/") {
			out = append(out, p.pid)
		}
	}
	return out
}

// TestE2EKillWithAFrozenKeeper: an adopted run whose keeper is
// SIGSTOPped: `kill JOB` exits 1 and says the keeper did not answer, and
// the run is ended all the same, through its cgroup leaf (its process
// group without cgroup v2); once the keeper resumes, the run is recorded
// once, interrupted, killed by operator.
func TestE2EKillWithAFrozenKeeper(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	arg := sleepArg("42.4")
	s := newSandbox(t, `shutdown_grace: 1s
jobs:
  - {name: long, schedule: "* * * * * *", command: "sleep `+arg+`", timeout: 1m, kill_grace: 2s}
`)
	t.Cleanup(func() { killCmdline(arg) })
	runID, _ := s.killDaemonInto(0)
	next := s.startDaemon()
	waitFor(t, 5*time.Second, "the run shown adopted", func() bool { return s.statusOf("long").Adopted })
	keepers := s.keeperPIDs()
	if len(keepers) != 1 {
		t.Fatalf("%d keepers of the sandbox's runs, want 1", len(keepers))
	}
	_ = syscall.Kill(keepers[0], syscall.SIGSTOP)
	t.Cleanup(func() { _ = syscall.Kill(keepers[0], syscall.SIGCONT) })
	asked := time.Now()
	code, out, errOut := s.runCV(30*time.Second, "kill", "long")
	t.Logf("kill answered after %v: %s", time.Since(asked).Round(time.Millisecond), strings.TrimSpace(out))
	via := "cgroup leaf"
	if _, err := cgroup.Detect(); err != nil {
		via = "process group"
	}
	if code == 0 || !strings.Contains(out, "signalled, keeper not answering (pid "+strconv.Itoa(keepers[0])+")") ||
		!strings.Contains(out, "ended through its "+via) {
		t.Errorf("kill with a frozen keeper: exit %d, stdout %q, stderr %q; want exit 1, keeper not answering, ended through its %s",
			code, out, errOut, via)
	}
	if n := len(withCmdline(arg)); n != 0 {
		t.Errorf("%d processes of the run left after kill said it ended", n)
	}
	_ = syscall.Kill(keepers[0], syscall.SIGCONT)
	r := s.recordOf(runID, 15*time.Second)
	// The keeper, resumed, reads the kill's question or sees the run's
	// exit first: either way the record is the operator's kill.
	if r.Outcome != run.Interrupted || !strings.HasPrefix(r.Reason, "killed by operator") {
		t.Errorf("the killed run recorded %s (%q), want interrupted, killed by operator", r.Outcome, r.Reason)
	}
	stopDaemons(t, next)
}
