package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const strictJobs = `jobs:
  - name: guarded
    schedule: "@hourly"
    command: echo ran >> ran.txt
    timeout: 5s
`

// TestE2EStrictModesRefuseStart: a state dir that another user owns or
// may write makes the daemon and `run NAME` refuse to start, naming the
// path, its owner and its mode, and the job does not run.
func TestE2EStrictModesRefuseStart(t *testing.T) {
	cred := throwawayUser(t, "cvstrict-locks")
	owner := fmt.Sprintf("cvstrict-locks (uid %d)", cred.Uid)
	mkdir := func(t *testing.T, path string) {
		if err := os.MkdirAll(path, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name  string
		spoil func(t *testing.T, state string) string // returns the path to be named
		why   string
		mode  string
		owner string
	}{
		{"locks dir 0777 of another user", func(t *testing.T, state string) string {
			p := filepath.Join(state, "locks")
			mkdir(t, p)
			mustChmod(t, p, 0o777)
			mustChown(t, p, cred)
			return p
		}, "owned by another user", "drwxrwxrwx", owner},
		{"lock file swapped by another user", func(t *testing.T, state string) string {
			p := filepath.Join(state, "locks", "guarded.lock")
			mkdir(t, filepath.Dir(p))
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			mustChown(t, p, cred)
			return p
		}, "owned by another user", "-rw-------", owner},
		{"state dir writable by others", func(t *testing.T, state string) string {
			mkdir(t, state)
			mustChmod(t, state, 0o777)
			return state
		}, "writable by others", "drwxrwxrwx", "root (uid 0)"},
		{"socket lock of another user", func(t *testing.T, state string) string {
			p := filepath.Join(state, "cronvisor.sock.lock")
			mkdir(t, state)
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			mustChown(t, p, cred)
			return p
		}, "owned by another user", "-rw-------", owner},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSandbox(t, strictJobs)
			path := tc.spoil(t, s.state)
			wants := []string{path, tc.why, "owner " + tc.owner, "mode " + tc.mode}

			code, _, stderr := s.runCV(15*time.Second, "daemon")
			t.Logf("daemon said: %s", stderr)
			if code != 1 {
				t.Errorf("daemon: exit %d, want 1; stderr:\n%s", code, stderr)
			}
			for _, w := range wants {
				if !strings.Contains(stderr, w) {
					t.Errorf("daemon's refusal does not say %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "cronvisor started") {
				t.Errorf("daemon started on an unsafe state dir:\n%s", stderr)
			}

			code, _, stderr = s.runCV(15*time.Second, "run", "guarded")
			if code != 125 || !strings.Contains(stderr, path) || !strings.Contains(stderr, tc.why) {
				t.Errorf("run: exit %d, stderr %q; want 125 naming %s as %s", code, stderr, path, tc.why)
			}
			if got := readFile(t, filepath.Join(s.dir, "ran.txt")); got != "" {
				t.Errorf("the job ran in an unsafe state dir: %q", got)
			}

			// The refusal is the modes' doing: made safe, the job runs.
			if err := filepath.Walk(s.state, func(p string, _ os.FileInfo, err error) error {
				if err != nil {
					return err
				}
				return os.Lchown(p, 0, 0)
			}); err != nil {
				t.Fatal(err)
			}
			mustChmod(t, s.state, 0o700)
			if _, err := os.Stat(filepath.Join(s.state, "locks")); err == nil {
				mustChmod(t, filepath.Join(s.state, "locks"), 0o700)
			}
			code, _, stderr = s.runCV(15*time.Second, "run", "guarded")
			if code != 0 || readFile(t, filepath.Join(s.dir, "ran.txt")) != "ran\n" {
				t.Errorf("run once made safe: exit %d, stderr %q; want it to run", code, stderr)
			}
		})
	}
}

// TestE2EClientRefusesASocketOfAnotherUser: with the state dir writable by
// another user, that user serves a fake control socket; root's `status`
// and `ui` must refuse it, saying who serves it, and print none of its
// answer.
func TestE2EClientRefusesASocketOfAnotherUser(t *testing.T) {
	cred := throwawayUser(t, "cvstrict-sock")
	s := newSandbox(t, strictJobs)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := s.public(self, "fake-daemon")
	if err := os.Mkdir(s.state, 0o777); err != nil {
		t.Fatal(err)
	}
	mustChmod(t, s.state, 0o777)
	sock := filepath.Join(s.state, "cronvisor.sock")
	fake := s.as(cred).startEnv([]string{fakeSocketVar + "=" + sock}, bin)

	// The fake does answer: the refusal below is the client's doing.
	var answer string
	waitFor(t, 10*time.Second, "the fake daemon to answer", func() bool {
		answer = rawGet(sock, "/v1/jobs")
		return strings.Contains(answer, fakeAnswer)
	})

	for _, args := range [][]string{{"status"}, {"status", "--json"}, {"ui"}} {
		code, stdout, stderr := s.runCV(15*time.Second, args...)
		t.Logf("%v said: %s", args, stderr)
		if code != 1 {
			t.Errorf("%v: exit %d, want 1; stdout %q, stderr %q", args, code, stdout, stderr)
		}
		if strings.Contains(stdout+stderr, fakeAnswer) {
			t.Errorf("%v printed the fake daemon's answer: stdout %q, stderr %q", args, stdout, stderr)
		}
		for _, w := range []string{sock, fmt.Sprintf("served by pid %d", fake.pid()),
			fmt.Sprintf("cvstrict-sock (uid %d)", cred.Uid), "not trusting"} {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: refusal does not say %q: %q", args, w, stderr)
			}
		}
	}
}

// rawGet does one HTTP GET on a unix socket without any of ctl's checks
// and returns the whole answer, or "" on failure.
func rawGet(sock, path string) string {
	c, err := net.DialTimeout("unix", sock, time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.0\r\nHost: x\r\n\r\n", path)
	b, _ := io.ReadAll(bufio.NewReader(c))
	return string(b)
}

// TestE2ERefusedUserIsToldTheDaemonRuns: another user's `status` against
// root's daemon says that a daemon runs and refused them, both when the
// socket's mode keeps them out and when only the daemon's uid check does.
func TestE2ERefusedUserIsToldTheDaemonRuns(t *testing.T) {
	cred := throwawayUser(t, "cvstrict-user")
	who := fmt.Sprintf("cvstrict-user (uid %d)", cred.Uid)
	s := newSandbox(t, strictJobs)
	bin := s.public(cvBin, "cronvisor")
	d := s.cv("daemon")
	sock := filepath.Join(s.state, "cronvisor.sock")
	waitFor(t, 15*time.Second, "the daemon's socket", func() bool {
		code, _, stderr := s.runCV(10*time.Second, "status")
		return code == 0 && strings.Contains(stderr, "from the daemon")
	})
	other := s.as(cred)

	code, stdout, stderr := other.runUser(bin, "status")
	t.Logf("refused user was told: %s", stderr)
	if code != 1 || !strings.Contains(stderr, "a cronvisor daemon serves "+sock+" but refused you ("+who+")") {
		t.Errorf("status as %s behind mode 0700: exit %d, stdout %q, stderr %q; want 1 and told the daemon refused them", who, code, stdout, stderr)
	}

	// Opened by hand: the daemon's own uid check answers.
	mustChmod(t, s.state, 0o755)
	mustChmod(t, sock, 0o666)
	code, stdout, stderr = other.runUser(bin, "status")
	t.Logf("refused user was told: %s", stderr)
	want := fmt.Sprintf("the cronvisor daemon (pid %d, running as root (uid 0)) refused you (%s)", d.pid(), who)
	if code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("status as %s on an open socket: exit %d, stdout %q, stderr %q; want 1 and %q", who, code, stdout, stderr, want)
	}
	if strings.Contains(stdout, "guarded") {
		t.Errorf("a refused user got the jobs: %q", stdout)
	}
	waitFor(t, 5*time.Second, "the refusal in the daemon's log", func() bool {
		return strings.Contains(d.stderr(), "refused a connection from another user")
	})
}

// TestE2EConsoleRefusesAnUnsafeStateDir: `cronvisor` on a terminal, which
// would schedule in-process, refuses a world-writable state dir before it
// opens cronvisor.log there.
func TestE2EConsoleRefusesAnUnsafeStateDir(t *testing.T) {
	s := newSandbox(t, strictJobs)
	if err := os.Mkdir(s.state, 0o777); err != nil {
		t.Fatal(err)
	}
	mustChmod(t, s.state, 0o777)
	// A shell on the terminal reports the console's exit status: tmux 3.3
	// leaves a pane process that exits within milliseconds of its start
	// unreaped now and then (its #{pane_dead_status} stays empty; seen with
	// this console in 2 of 15 runs, never with sh itself).
	tm := startTmux(t, s, 200, 20, "/bin/sh", "-c", `"$0" "$@"; echo "console exit status $?"`, cvBin, "--config", s.config)
	tm.await(10*time.Second, "the console to refuse and exit", func(screen string) bool {
		return tm.dead() && strings.Contains(screen, "console exit status")
	})
	// With the scrollback, wrapped lines joined: the message is long.
	screen, err := tm.run("capture-pane", "-p", "-J", "-S", "-", "-t", "cv")
	if err != nil {
		t.Fatalf("tmux capture-pane: %v: %s", err, screen)
	}
	flat := strings.Join(strings.Fields(screen), " ")
	for _, w := range []string{"unsafe state dir", "is writable by others", "owner root (uid 0)", "mode drwxrwxrwx"} {
		if !strings.Contains(flat, w) {
			t.Errorf("console's refusal does not say %q; the screen:\n%s", w, screen)
		}
	}
	if m := regexp.MustCompile(`console exit status (\d+)`).FindStringSubmatch(flat); m == nil || m[1] != "1" {
		t.Errorf("console exit status %v, want 1; the screen:\n%s", m, screen)
	}
	if _, err := os.Stat(filepath.Join(s.state, "cronvisor.log")); err == nil {
		t.Error("the console opened cronvisor.log in the unsafe state dir")
	}
}
