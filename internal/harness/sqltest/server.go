// Package sqltest runs throwaway database servers for tests: MariaDB
// (mariadb-install-db and mariadbd from Debian's mariadb-server) and
// PostgreSQL (initdb and postgres from Debian's postgresql), each on a
// free loopback port with a temporary data directory, in its own process
// group, killed with the test binary should it die. They are meant to be
// started once per test package, in TestMain, and shared: each test takes
// a database of its own (CreateDB). Stop and Start simulate an outage and
// a restart on the same port and data.
package sqltest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ReadyTimeout bounds the wait for a started server to answer; a loaded
// machine may need a good part of it for a first start.
const ReadyTimeout = 60 * time.Second

// server is one database server process and what restarts it.
type server struct {
	name  string // for messages
	dir   string // removed by Close
	host  string // the address it listens on
	port  int
	argv  func(port int) []string
	cred  *syscall.Credential // nil: run as this user
	dial  func(port int) (*sql.DB, error)
	admin *sql.DB

	mu   sync.Mutex
	cmd  *exec.Cmd
	exit chan struct{} // closed when cmd has been waited for
}

// Port is the server's TCP port on Host (127.0.0.1 unless Listen said).
func (s *server) Port() int { return s.port }

// Dir is the server's temporary directory (data, socket, log).
func (s *server) Dir() string { return s.dir }

// Running reports whether the server process is up.
func (s *server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// start runs the server on s.port, trying fresh ports when another
// process took the probed one, and waits until it answers.
func (s *server) startFresh() error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if s.port, err = freePortOn(s.host); err != nil {
			return err
		}
		if err = s.Start(); err == nil {
			return nil
		}
	}
	return err
}

// Start restarts a stopped server on the same port and data directory;
// a running one is left alone.
func (s *server) Start() error {
	s.mu.Lock()
	if s.cmd != nil {
		s.mu.Unlock()
		return nil
	}
	logPath := filepath.Join(s.dir, "server.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	defer logf.Close()
	argv := s.argv(s.port)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr, cmd.Dir = logf, logf, s.dir
	// Its own group, so Stop kills the server and every child it forked;
	// killed with the test binary too, should that die without cleanups
	// (the kernel applies Pdeathsig after the credential change).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: s.cred}
	if err := cmd.Start(); err != nil {
		s.mu.Unlock()
		return fmt.Errorf("sqltest: start %s: %w", s.name, err)
	}
	exit := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exit) }()
	s.cmd, s.exit = cmd, exit
	s.mu.Unlock()
	if err := s.waitReady(exit); err != nil {
		s.Stop()
		log, _ := os.ReadFile(logPath)
		return fmt.Errorf("sqltest: %s on port %d: %w; log:\n%s", s.name, s.port, err, log)
	}
	return nil
}

// Stop kills the server's process group (SIGKILL: an outage, not a clean
// shutdown) and waits for it. A no-op when it is stopped.
func (s *server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	pgid := s.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-s.exit // a SIGKILLed process always exits
	s.cmd = nil
	if s.admin != nil { // its idle connections are dead: a restart opens a new pool
		s.admin.Close()
		s.admin = nil
	}
	// Its children (postgres backends) are in the group too and die with
	// the same signal, a moment later: a restart before the last has gone
	// finds its shared memory still attached and refuses to start.
	for deadline := time.Now().Add(5 * time.Second); groupAlive(pgid) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	awaitShmDetached(s.dir, 5*time.Second)
}

// groupAlive reports whether a process of group pgid is still running
// (zombies have let go of everything but their pid).
func groupAlive(pgid int) bool {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and ')'.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}

// Close stops the server and removes its directory.
func (s *server) Close() {
	s.Stop()
	_ = os.RemoveAll(s.dir)
}

func (s *server) addr() string { return net.JoinHostPort(s.host, strconv.Itoa(s.port)) }

// waitReady pings through the driver until it answers, the process exits
// or ReadyTimeout passes.
func (s *server) waitReady(exit <-chan struct{}) error {
	if s.admin == nil {
		db, err := s.dial(s.port)
		if err != nil {
			return err
		}
		s.admin = db
	}
	deadline := time.Now().Add(ReadyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := s.admin.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exit:
			return errors.New("exited before answering")
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer within %s: %w", ReadyTimeout, err)
		}
	}
}

// Exec runs a statement as the administrator.
func (s *server) Exec(query string, args ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := s.admin.ExecContext(ctx, query, args...)
	return err
}

// tempDir makes a directory the server's user can use.
func tempDir(cred *syscall.Credential) (string, error) {
	dir, err := os.MkdirTemp("", "sqltest-")
	if err != nil {
		return "", err
	}
	if cred != nil {
		err = os.Chmod(dir, 0o755)
		if err == nil {
			err = os.Chown(dir, int(cred.Uid), int(cred.Gid))
		}
		if err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// run runs a setup command (initdb, mariadb-install-db) bounded in time.
func run(cred *syscall.Credential, argv ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), ReadyTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("sqltest: %s: %v\n%s", filepath.Base(argv[0]), err, out)
	}
	return nil
}
