package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cvBin is the cronvisor binary built once by TestMain and run as a real
// process by every end-to-end test. Package-level because TestMain has no
// other way to hand it to the tests; it is written once, before any test.
var cvBin string

// markerVar is set, with a value unique to each sandbox, in the environment
// of every process a test starts. Jobs inherit it, also those that escape
// their process group, so /proc/PID/environ finds whatever a test left
// behind, without confusing it with other tests' processes.
const markerVar = "CRONVISOR_E2E_MARK"

func TestMain(m *testing.M) {
	if path := os.Getenv(fakeSocketVar); path != "" {
		os.Exit(serveFakeSocket(path)) // the test binary as another user's fake daemon
	}
	code := buildAndRun(m)
	sqlServers.Close() // started by the SQL backends' tests that needed them
	os.Exit(code)
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "cronvisor-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	cvBin = filepath.Join(dir, "cronvisor")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "build", "-o", cvBin, "cronvisor").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// sandbox is one test's directory: jobs.yaml, its state dir, and the marker
// that tags every process the test starts.
type sandbox struct {
	t      *testing.T
	dir    string
	config string // absolute path of jobs.yaml
	state  string // absolute state_dir (jobs.yaml says "state")
	marker string // value of markerVar for this sandbox
	// cred, when set, is the user the sandbox's processes run as.
	cred *syscall.Credential
}

// newSandbox writes jobs.yaml with `state_dir: state` followed by body, and
// registers the final check that no process of the test survives (and
// then the removal of its runs' leftover cgroup leaves). That check is
// registered first so that it runs last, after the cleanups that
// kill the cronvisor processes' groups.
func newSandbox(t *testing.T, body string) *sandbox {
	t.Helper()
	dir := t.TempDir()
	s := &sandbox{t: t, dir: dir, config: filepath.Join(dir, "jobs.yaml"),
		state: filepath.Join(dir, "state"), marker: t.Name() + "-" + randHex(6)}
	if err := os.WriteFile(s.config, []byte("state_dir: state\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.checkNoSurvivors()
		s.removeRunLeaves()
	})
	return s
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// sleepArg returns a sleep duration unique to this run of the test, based on
// base (e.g. "31.4" -> "31.4" plus random digits), so /proc can be searched
// for exactly this test's sleeps.
func sleepArg(base string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	n := (uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])) % 1000000
	return fmt.Sprintf("%s%06d1", base, n) // the trailing 1 keeps the digits significant
}

// proc is a process a test started, in its own process group.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	outF   string
	errF   string
	done   chan struct{}
	start  time.Time
	exited time.Time
}

// env is the environment of every process the sandbox starts.
func (s *sandbox) env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CRONVISOR_") {
			env = append(env, kv)
		}
	}
	return append(append(env, markerVar+"="+s.marker), extra...)
}

// cv starts `cronvisor --config JOBS.YAML args...`.
func (s *sandbox) cv(args ...string) *proc {
	return s.startEnv(nil, cvBin, append([]string{"--config", s.config}, args...)...)
}

// startEnv starts name with args in the sandbox dir, stdout and stderr
// going to files (so that a straggler holding them open cannot make Wait
// hang), in a new process group that a cleanup kills.
func (s *sandbox) startEnv(extraEnv []string, name string, args ...string) *proc {
	t := s.t
	t.Helper()
	outF, err := os.CreateTemp(s.dir, "out-*")
	if err != nil {
		t.Fatal(err)
	}
	errF, err := os.CreateTemp(s.dir, "err-*")
	if err != nil {
		t.Fatal(err)
	}
	defer outF.Close()
	defer errF.Close()
	cmd := exec.Command(name, args...)
	cmd.Dir = s.dir
	cmd.Env = s.env(extraEnv...)
	cmd.Stdout, cmd.Stderr = outF, errF
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: s.cred}
	p := &proc{t: t, cmd: cmd, outF: outF.Name(), errF: errF.Name(), done: make(chan struct{}), start: time.Now()}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		_ = cmd.Wait()
		p.exited = time.Now()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			t.Errorf("%s (pid %d) did not exit after SIGKILL", name, cmd.Process.Pid)
		}
	})
	return p
}

// pid is the process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// wait waits at most timeout for the process to exit and returns its exit
// code (-1 when a signal ended it). It fails the test on timeout.
func (p *proc) wait(timeout time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
		<-p.done
		p.t.Fatalf("%v did not exit within %v; stderr:\n%s", p.cmd.Args, timeout, p.stderr())
		return -1
	}
}

// elapsed is how long the process ran; valid after wait.
func (p *proc) elapsed() time.Duration { return p.exited.Sub(p.start) }

func (p *proc) stdout() string { return readFile(p.t, p.outF) }
func (p *proc) stderr() string { return readFile(p.t, p.errF) }

// runCV runs cronvisor to completion (bounded by timeout) and returns its
// exit code, stdout and stderr.
func (s *sandbox) runCV(timeout time.Duration, args ...string) (int, string, string) {
	s.t.Helper()
	p := s.cv(args...)
	code := p.wait(timeout)
	return code, p.stdout(), p.stderr()
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

// procInfo is a live (non-zombie) process seen in /proc.
type procInfo struct {
	pid     int
	cmdline string // NULs as spaces
	environ []string
}

// processes lists the live processes other than this one. Zombies are left
// out: they hold no lock and no file, and their reaping is their parent's
// business (a SIGKILLed supervisor's orphans go to whatever reaps there).
func processes() []procInfo {
	entries, _ := os.ReadDir("/proc")
	var out []procInfo
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || isZombie(pid) {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		cmd, err1 := os.ReadFile(filepath.Join(dir, "cmdline"))
		env, err2 := os.ReadFile(filepath.Join(dir, "environ"))
		if err1 != nil && err2 != nil {
			continue
		}
		out = append(out, procInfo{pid: pid,
			cmdline: string(bytes.ReplaceAll(bytes.TrimRight(cmd, "\x00"), []byte{0}, []byte{' '})),
			environ: strings.Split(string(env), "\x00")})
	}
	return out
}

func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // gone
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
}

// withCmdline returns the live processes whose command line contains sub.
func withCmdline(sub string) []procInfo {
	var out []procInfo
	for _, p := range processes() {
		if strings.Contains(p.cmdline, sub) {
			out = append(out, p)
		}
	}
	return out
}

// tagged returns the live processes carrying this sandbox's marker.
func (s *sandbox) tagged() []procInfo {
	want := markerVar + "=" + s.marker
	var out []procInfo
	for _, p := range processes() {
		for _, kv := range p.environ {
			if kv == want {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// checkNoSurvivors fails the test if any process it started (or any
// descendant of one) is still alive, after a short settling time for
// processes that are being killed right now; survivors are killed.
func (s *sandbox) checkNoSurvivors() {
	var left []procInfo
	for deadline := time.Now().Add(time.Second); ; {
		if left = s.tagged(); len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, p := range left {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
		s.t.Errorf("process left behind: pid %d: %s", p.pid, p.cmdline)
	}
}

// waitFor polls cond every 20 ms until it holds, failing the test after
// timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lines splits s into its non-empty lines.
func lines(s string) []string {
	var out []string
	for l := range strings.Lines(s) {
		if l = strings.TrimRight(l, "\n"); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// holderPIDRE finds the holder's pid in a skip reason such as
// "cronvisor: once: skipped: lock held by pid 123@host (job once, ...)".
var holderPIDRE = regexp.MustCompile(`lock held by pid (\d+)`)

// fullSuiteOnly keeps a test that waits seconds on real deadlines,
// keepers, terminals or servers out of `go test -short`, the quick loop
// of CONTRIBUTING.md; ./test.sh and CI run it.
func fullSuiteOnly(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow: waits seconds on real deadlines, keepers or servers; runs in the full suite (./test.sh)")
	}
}
