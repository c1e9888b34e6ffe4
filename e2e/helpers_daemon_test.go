package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// startDaemon starts `cronvisor daemon` and waits until it serves.
func (s *sandbox) startDaemon() *proc {
	s.t.Helper()
	d := s.cv("daemon", "--log-format", "json")
	waitFor(s.t, 10*time.Second, "daemon start", func() bool { return strings.Contains(d.stderr(), "cronvisor started") })
	return d
}

// startDaemonVia starts the sandbox's daemon through the command prefix
// (none: directly) and waits for its start.
func (s *sandbox) startDaemonVia(prefix []string) *proc {
	s.t.Helper()
	if len(prefix) == 0 {
		return s.startDaemon()
	}
	args := append(slices.Clone(prefix[1:]), cvBin, "--config", s.config, "daemon", "--log-format", "json")
	d := s.startEnv(nil, prefix[0], args...)
	waitFor(s.t, 10*time.Second, "daemon start", func() bool { return strings.Contains(d.stderr(), "cronvisor started") })
	return d
}

// startHost starts the sandbox's daemon as host name, in a UTS namespace
// of its own (every place cronvisor names its host asks os.Hostname).
func (s *sandbox) startHost(name string) *proc {
	s.t.Helper()
	script := fmt.Sprintf("hostname %s && exec '%s' --config '%s' daemon --log-format json", name, cvBin, s.config)
	d := s.startEnv(nil, "unshare", "--uts", "sh", "-c", script)
	waitFor(s.t, 10*time.Second, name+" start", func() bool { return strings.Contains(d.stderr(), "cronvisor started") })
	return d
}

// client connects to the sandbox's daemon.
func (s *sandbox) client() *ctl.Client {
	s.t.Helper()
	c, err := ctl.Dial(filepath.Join(s.state, "cronvisor.sock"))
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { c.Close() })
	return c
}

// daemonLog is a daemon's JSON log records with all their fields.
func daemonLog(t *testing.T, d *proc) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range lines(d.stderr()) {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// stopDaemons sends SIGTERM to every daemon, then checks that each exits
// 0 within 20 s.
func stopDaemons(t *testing.T, ds ...*proc) {
	t.Helper()
	for _, d := range ds {
		_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	}
	for _, d := range ds {
		if code := d.wait(20 * time.Second); code != 0 {
			t.Errorf("daemon %d: exit %d after SIGTERM, want 0; stderr:\n%s", d.pid(), code, d.stderr())
		}
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	ls := lines(s)
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

// historyLines runs `cronvisor history --json --limit 0` with args and
// returns its lines, one record each.
func (s *sandbox) historyLines(args ...string) []string {
	s.t.Helper()
	code, stdout, stderr := s.runCV(20*time.Second, append([]string{"history", "--json", "--limit", "0"}, args...)...)
	if code != 0 {
		s.t.Fatalf("history --json: exit %d; stderr %q", code, stderr)
	}
	return lines(stdout)
}

// historyJSON decodes `cronvisor history --json` into records.
func (s *sandbox) historyJSON(args ...string) []run.Record {
	s.t.Helper()
	var out []run.Record
	for _, l := range s.historyLines(args...) {
		var r run.Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			s.t.Fatalf("history --json: line %q: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}

// historyRaw returns the raw JSON objects of `history --json`, to check
// the contract's field names themselves.
func (s *sandbox) historyRaw(args ...string) []map[string]any {
	s.t.Helper()
	var out []map[string]any
	for _, l := range s.historyLines(args...) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			s.t.Fatalf("history --json: line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// killAtRunStarted starts a daemon on the sandbox with its stderr on a
// pipe, SIGKILLs it the moment it logs `run started` (before the run's
// start row can have been committed, which is what the test is after) and
// returns that run's id and the daemon's log. The run's process survives
// as an orphan.
func (s *sandbox) killAtRunStarted(timeout time.Duration) (string, string) {
	t := s.t
	t.Helper()
	cmd := exec.Command(cvBin, "--config", s.config, "daemon", "--log-format", "json")
	cmd.Dir, cmd.Env = s.dir, s.env()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The daemon is SIGKILLed below; the cleanup is for a failure before.
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	found := make(chan string, 1)
	var log strings.Builder // written by the reader until stderr closes
	read := make(chan struct{})
	go func() {
		defer close(read)
		killed := false
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.Write(append(sc.Bytes(), '\n'))
			var rec struct {
				Msg   string `json:"msg"`
				RunID string `json:"run_id"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "run started" && !killed {
				killed = true
				_ = cmd.Process.Signal(syscall.SIGKILL)
				found <- rec.RunID
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	var runID string
	select {
	case runID = <-found:
	case <-time.After(timeout):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	<-read // the pipe closes with the daemon: the orphan does not hold it
	_ = cmd.Wait()
	if runID == "" {
		t.Fatalf("the daemon logged no `run started` within %v; its log:\n%s", timeout, log.String())
	}
	return runID, log.String()
}

// runsByID returns the history's run records (skips left out) by run id,
// failing the test on a run id recorded twice.
func (s *sandbox) runsByID() map[string]run.Record {
	s.t.Helper()
	out := map[string]run.Record{}
	for _, r := range s.historyJSON() {
		if r.Outcome == run.Skipped {
			continue
		}
		if prev, dup := out[r.RunID]; dup {
			s.t.Fatalf("run %s recorded twice: %+v and %+v", r.RunID, prev, r)
		}
		out[r.RunID] = r
	}
	return out
}

// killCmdline SIGKILLs the live processes whose command line holds sub.
func killCmdline(sub string) {
	for _, p := range withCmdline(sub) {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
}

// killKeepers SIGKILLs the live keepers of the sandbox's runs (their
// End is under its state dir) and returns how many it found.
func (s *sandbox) killKeepers() int {
	n := 0
	for _, p := range processes() {
		if strings.HasPrefix(p.cmdline, "cronvisor-keeper ") && strings.Contains(p.cmdline, " -ends "+s.state+"/") {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
			n++
		}
	}
	return n
}

// sleeps counts the live `sleep ARG` processes (not the shells running them).
func sleeps(arg string) int {
	n := 0
	for _, p := range withCmdline(arg) {
		if strings.HasPrefix(p.cmdline, "sleep ") {
			n++
		}
	}
	return n
}
