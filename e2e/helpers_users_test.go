package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// fakeSocketVar makes the test binary, run as another user, a fake daemon
// on the socket at its value.
const fakeSocketVar = "CRONVISOR_E2E_FAKE_SOCKET"

// fakeAnswer is a job name only the fake daemon answers with.
const fakeAnswer = "FAKE-ANSWER-FROM-ANOTHER-USER"

// fakeLife bounds the fake daemon should its test not kill it.
const fakeLife = 30 * time.Second

// serveFakeSocket answers every request with a made-up job list, to any
// uid, the way a socket planted in a writable state dir would.
func serveFakeSocket(path string) int {
	ln, err := net.Listen("unix", path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake daemon:", err)
		return 1
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `[{"name":%q,"state":"idle"}]`+"\n", fakeAnswer)
	}), ReadHeaderTimeout: 5 * time.Second}
	stop := time.AfterFunc(fakeLife, func() { srv.Close() })
	defer stop.Stop()
	_ = srv.Serve(ln)
	return 0
}

// throwawayUser creates the local user name (or reuses it, left by an
// aborted run) and deletes it when the test ends. It fails, not skips,
// without root: CI runs the end-to-end tests as root.
func throwawayUser(t *testing.T, name string) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("%s creates the user %s and needs root (CI runs as root); run it as root", t.Name(), name)
	}
	if _, err := user.Lookup(name); err != nil {
		out, err := exec.Command("useradd", "--system", "--no-create-home", "--user-group",
			"--shell", "/usr/sbin/nologin", name).CombinedOutput()
		if err != nil {
			t.Fatalf("useradd %s: %v: %s", name, err, out)
		}
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("userdel", name).CombinedOutput(); err != nil {
			t.Errorf("userdel %s: %v: %s", name, err, out)
		}
	})
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// as is the sandbox whose processes run as cred.
func (s *sandbox) as(cred *syscall.Credential) *sandbox {
	o := *s
	o.cred = cred
	return &o
}

// public lets other users into the sandbox (its parent included, which
// t.TempDir makes 0700) and gives them a copy of bin there.
func (s *sandbox) public(bin, name string) string {
	t := s.t
	t.Helper()
	for _, d := range []string{filepath.Dir(s.dir), s.dir} {
		mustChmod(t, d, 0o755)
	}
	dst := filepath.Join(s.dir, name)
	in, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

func mustChmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func mustChown(t *testing.T, path string, cred *syscall.Credential) {
	t.Helper()
	if err := os.Lchown(path, int(cred.Uid), int(cred.Gid)); err != nil {
		t.Fatal(err)
	}
}

// runUser runs bin --config JOBS.YAML args... as the sandbox's user.
func (s *sandbox) runUser(bin string, args ...string) (int, string, string) {
	s.t.Helper()
	p := s.startEnv(nil, bin, append([]string{"--config", s.config}, args...)...)
	code := p.wait(15 * time.Second)
	return code, p.stdout(), p.stderr()
}
