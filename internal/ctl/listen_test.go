package ctl

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/statedir"
)

func TestListen(t *testing.T) {
	tests := []struct {
		name string
		// prepare puts what is already there; its cleanup is the test's.
		prepare func(t *testing.T, path string)
		wantIs  error // nil: Listen must succeed
		wantErr string
		// after checks what prepare left, once Listen returned.
		after func(t *testing.T, path string)
	}{
		{name: "nothing there", prepare: func(*testing.T, string) {}},
		{name: "stale socket of a dead daemon is replaced", prepare: staleSocket},
		{name: "live daemon is not stolen", prepare: liveDaemon, wantIs: ErrInUse, wantErr: ".lock is locked",
			after: answers},
		{name: "live socket of a daemon without the flock is not stolen", prepare: liveSocket, wantIs: ErrInUse,
			wantErr: "answers", after: answers},
		{name: "a file that is not a socket is kept", prepare: regularFile, wantErr: "not a socket",
			after: func(t *testing.T, path string) {
				if b, err := os.ReadFile(path); err != nil || string(b) != "precious" {
					t.Errorf("file now %q, %v; want it untouched", b, err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := sockDir(t) + "/cronvisor.sock"
			tt.prepare(t, path)
			ln, err := Listen(path)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Listen: %v", err)
				}
				defer ln.Close()
				checkServes(t, ln, path)
				return
			}
			if err == nil {
				ln.Close()
				t.Fatal("Listen succeeded, want an error")
			}
			if errors.Is(err, ErrInUse) != (tt.wantIs == ErrInUse) || !strings.Contains(err.Error(), tt.wantErr) ||
				!strings.Contains(err.Error(), path) {
				t.Errorf("error %q, want one matching %v that names %s and says %q", err, tt.wantIs, path, tt.wantErr)
			}
			tt.after(t, path)
		})
	}
}

// checkServes asserts that ln is a 0600 socket at path that clients reach,
// and that closing it removes the file and lets the next daemon in.
func checkServes(t *testing.T, ln net.Listener, path string) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want a socket with 0600", fi.Mode())
	}
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	if _, err := Dial(path); err != nil {
		t.Errorf("Dial: %v", err)
	}
	if err := ln.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket file after Close: %v, want it gone", err)
	}
	next, err := Listen(path)
	if err != nil {
		t.Fatalf("Listen after Close: %v", err)
	}
	next.Close()
}

func staleSocket(t *testing.T, path string) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false) // as if its daemon had died
	ln.Close()
}

func liveDaemon(t *testing.T, path string) {
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go acceptAll(ln)
}

func liveSocket(t *testing.T, path string) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go acceptAll(ln)
}

func regularFile(t *testing.T, path string) {
	if err := os.WriteFile(path, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// acceptAll plays a daemon that answers connections until ln closes.
func acceptAll(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

// answers asserts that the first daemon still serves its socket.
func answers(t *testing.T, path string) {
	t.Helper()
	if _, err := Dial(path); err != nil {
		t.Errorf("the first daemon no longer answers: %v", err)
	}
}

func TestListenModeIgnoresUmask(t *testing.T) {
	old := syscall.Umask(0) // bind would make the socket 0777
	defer syscall.Umask(old)
	path := sockDir(t) + "/cronvisor.sock"
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, p := range []string{path, path + ".lock"} {
		if fi, err := os.Lstat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want mode 0600", p, fi.Mode(), err)
		}
	}
}

func TestListenPathTooLong(t *testing.T) {
	path := "/tmp/" + strings.Repeat("d", 100) + "/cronvisor.sock"
	_, err := Listen(path)
	if err == nil || !strings.Contains(err.Error(), "longer than") || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %v, want one naming the path and the limit", err)
	}
}

func TestDialNoDaemon(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
	}{
		{"no socket file", func(*testing.T, string) {}},
		{"stale socket file", staleSocket},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := sockDir(t) + "/cronvisor.sock"
			tt.prepare(t, path)
			_, err := Dial(path)
			if !errors.Is(err, ErrNoDaemon) || !strings.Contains(err.Error(), path) {
				t.Errorf("Dial: %v, want ErrNoDaemon naming %s", err, path)
			}
		})
	}
}

func TestDaemonGoneAfterDial(t *testing.T) {
	s := startServer(t, newFakeBackend(), nil)
	if err := s.shutdown(); err != nil {
		t.Fatal(err)
	}
	_, err := s.client.Jobs(within(t, 5*time.Second))
	if !errors.Is(err, ErrNoDaemon) {
		t.Errorf("Jobs after the daemon left: %v, want ErrNoDaemon", err)
	}
}

func TestPeerRefusedByUID(t *testing.T) {
	s := startServer(t, newFakeBackend(), func(uint32) bool { return false })
	_, err := s.client.Jobs(within(t, 5*time.Second))
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "refused you") {
		t.Fatalf("a refused peer got %v, want ErrRefused saying the daemon refused it", err)
	}
	if log := s.log.String(); !strings.Contains(log, "refused a connection from another user") {
		t.Errorf("refusal not logged; log:\n%s", log)
	}
}

// TestListenLocksWhereStatedirSays: statedir.Check judges the socket's
// lock file by the name statedir gives it, so Listen must take that one.
func TestListenLocksWhereStatedirSays(t *testing.T) {
	dir := statedir.Dir(sockDir(t))
	ln, err := Listen(dir.Socket())
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	defer ln.Close()
	if _, err := os.Stat(dir.SocketLock()); err != nil {
		t.Errorf("no lock file at %s: %v", dir.SocketLock(), err)
	}
}
