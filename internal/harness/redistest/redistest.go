// Package redistest runs a throwaway redis-server for tests: on a free
// loopback port, in a temporary directory, without persistence, in its own
// process group, and stopped when the test ends. Stop and Start simulate an
// outage and a restart on the same port (which, without persistence,
// loses every key, as a real crash of such a server would).
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readyTimeout bounds the wait for a started server to answer PING.
const readyTimeout = 5 * time.Second

// Server is one redis-server process. Its methods must be called from the
// test's goroutine (they may call t.Fatal).
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	cmd  *exec.Cmd
	exit chan struct{} // closed when cmd has been waited for
}

// New starts a server for t and stops it in t.Cleanup. A missing
// redis-server fails the test: the lock tests need a real one.
func New(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redistest: %v (install redis-server)", err)
	}
	s := &Server{t: t, bin: bin, dir: t.TempDir()}
	t.Cleanup(s.Stop)
	// Another process may take the free port between our probe and the
	// server's bind; a fresh port is tried then.
	for attempt := 0; ; attempt++ {
		if s.port, err = freePort(); err != nil {
			t.Fatalf("redistest: %v", err)
		}
		err = s.start()
		if err == nil {
			return s
		}
		if attempt == 2 {
			t.Fatalf("redistest: %v", err)
		}
	}
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL is the server's redis:// URL, database 0.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// Start restarts a stopped server on the same port; a running one is left
// alone.
func (s *Server) Start() {
	s.t.Helper()
	if s.cmd != nil {
		return
	}
	if err := s.start(); err != nil {
		s.t.Fatalf("redistest: restart: %v", err)
	}
}

// Stop kills the server's process group (SIGKILL: an outage, not a clean
// shutdown) and waits for it. It is a no-op when the server is stopped.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-s.exit:
	case <-time.After(readyTimeout): // cannot happen to a SIGKILLed process
		s.t.Errorf("redistest: redis-server pid %d did not exit", s.cmd.Process.Pid)
	}
	s.cmd = nil
}

// start runs redis-server on s.port and waits until it answers PING.
func (s *Server) start() error {
	logPath := filepath.Join(s.dir, "redis.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--loglevel", "warning")
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own group, so Stop kills exactly it; and killed with the test
	// binary, should that die without running cleanups.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	exit := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exit) }()
	s.cmd, s.exit = cmd, exit
	if err := s.waitReady(); err != nil {
		s.Stop()
		log, _ := os.ReadFile(logPath)
		return fmt.Errorf("redis-server on port %d: %w; log:\n%s", s.port, err, log)
	}
	return nil
}

// waitReady polls with PING until +PONG, the process exits, or the
// timeout passes.
func (s *Server) waitReady() error {
	deadline := time.Now().Add(readyTimeout)
	for {
		err := ping(s.Addr())
		if err == nil {
			return nil
		}
		select {
		case <-s.exit:
			return errors.New("exited before answering PING")
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer to PING within %s: %w", readyTimeout, err)
		}
	}
}

// ping speaks just enough RESP to see the server up.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
