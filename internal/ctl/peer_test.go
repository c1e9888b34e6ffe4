package ctl

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/harness/testlog"
)

// nobody is the unprivileged uid the other-user client runs as.
const nobody = 65534

// TestOtherUser runs a real client as another user, by re-executing the
// test binary as nobody, against a real server.
func TestOtherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("running a client as another user needs root: run the tests as root, as CI does")
	}
	dir := publicDir(t)
	bin := copyTestBinary(t, dir)
	tests := []struct {
		name string
		// allow is the daemon's uid check: allowUser(nobody) plays a
		// daemon that runs as nobody itself.
		allow   func(uint32) bool
		open    bool // chmod the socket 0666, so that only the uid check stands
		want    int
		wantLog string
		wantOut string // what the refused client is told
	}{
		{"mode 0600 keeps another user out", allowUser(os.Geteuid()), false, peerNoDial, "", "daemon serves"},
		{"another user is refused by its uid", allowUser(os.Geteuid()), true, peerRefused, "uid=65534", "refused you (nobody (uid 65534))"},
		{"the daemon's own user is served", allowUser(nobody), true, peerOK, "", ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "s"+string(rune('0'+i))+".sock")
			s := startServerAt(t, path, newFakeBackend(), tt.allow)
			if tt.open {
				if err := os.Chmod(path, 0o666); err != nil {
					t.Fatal(err)
				}
			}
			code, out := runAs(t, bin, path, nobody)
			if code != tt.want {
				t.Fatalf("client as uid %d exited %d, want %d; its stderr: %s", nobody, code, tt.want, out)
			}
			if !strings.Contains(s.log.String(), tt.wantLog) {
				t.Errorf("log does not contain %q:\n%s", tt.wantLog, s.log)
			}
			if !strings.Contains(out, tt.wantOut) || (tt.wantOut != "" && !strings.Contains(out, "refused")) {
				t.Errorf("the client was told %q, want it to say it was refused (%q)", out, tt.wantOut)
			}
		})
	}
}

// TestServerOfAnotherUserIsNotTrusted serves a socket as another user, the
// way someone who can write a state dir would plant one, and checks that
// the client refuses it before asking anything, on Dial and on a later
// connection of a client dialled before the swap.
func TestServerOfAnotherUserIsNotTrusted(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("serving a socket as another user needs root (CI runs as root); TestUntrustedErrorNamesWhoServes covers the message")
	}
	dir := publicDir(t)
	bin := copyTestBinary(t, dir)
	sockDir := filepath.Join(dir, "state")
	if err := os.Mkdir(sockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(sockDir, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(sockDir, "cronvisor.sock")
	startAs(t, bin, serveEnv+"="+path, nobody)
	deadline := time.Now().Add(10 * time.Second)
	var err error
	for {
		var c *Client
		c, err = Dial(path)
		if c != nil {
			c.Close()
			t.Fatal("Dial trusted a socket served by another user")
		}
		if !errors.Is(err, ErrNoDaemon) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	var untrusted *UntrustedError
	if !errors.As(err, &untrusted) || !errors.Is(err, ErrUntrusted) {
		t.Fatalf("Dial: %v, want an UntrustedError", err)
	}
	if untrusted.ServerUID != nobody || untrusted.ServerPID <= 0 {
		t.Errorf("UntrustedError names uid %d pid %d, want uid %d and its pid", untrusted.ServerUID, untrusted.ServerPID, nobody)
	}
	for _, want := range []string{path, "nobody (uid 65534)", "not by root", "not trusting"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not say %q", err, want)
		}
	}
}

// TestUntrustedErrorNamesWhoServes needs no second user.
func TestUntrustedErrorNamesWhoServes(t *testing.T) {
	err := error(&UntrustedError{Path: "/s/cronvisor.sock", ServerUID: 4242, ServerPID: 77, Self: 0})
	want := "control socket /s/cronvisor.sock is served by pid 77 running as uid 4242, not by root: not trusting"
	if !strings.Contains(err.Error(), want) || !errors.Is(err, ErrUntrusted) {
		t.Errorf("got %q, want it to contain %q and match ErrUntrusted", err, want)
	}
}

// startAs starts the test binary as uid with env set, in its own process
// group, killed as a group when the test ends.
func startAs(t *testing.T, bin, env string, uid uint32) {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), env, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:    true,
		Credential: &syscall.Credential{Uid: uid, Gid: uid},
	}
	var stderr testlog.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("helper as uid %d (pid %d) did not exit after SIGKILL", uid, cmd.Process.Pid)
		}
		if s := stderr.String(); s != "" {
			t.Logf("helper as uid %d said: %s", uid, s)
		}
	})
}

// publicDir is a directory every user may enter: the other-user client
// must reach both the socket and the test binary.
func publicDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "ctlpeer")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// copyTestBinary copies the running test binary into dir: go test builds
// it under a 0700 directory that another user cannot execute from.
func copyTestBinary(t *testing.T, dir string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bin := filepath.Join(dir, "ctl.test")
	dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// runAs runs the peer helper as uid in its own process group, killed as a
// group if it outlives its time, and returns its exit code and stderr.
func runAs(t *testing.T, bin, path string, uid uint32) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Dir = "/"
	// Under -race the helper would sleep a second at exit while the HTTP
	// client's goroutines live.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	cmd.Env = append(os.Environ(), peerEnv+"="+path, "GORACE="+gorace)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:    true,
		Credential: &syscall.Credential{Uid: uid, Gid: uid},
	}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &exit) && ctx.Err() == nil:
		return exit.ExitCode(), stderr.String()
	}
	t.Fatalf("client as uid %d: %v; stderr: %s", uid, err, stderr.String())
	return 0, ""
}
