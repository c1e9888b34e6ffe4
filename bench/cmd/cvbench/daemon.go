package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// daemon is a `cronvisor daemon` started by the benchmark, in its own
// process group so that stop can end whatever it leaves behind.
type daemon struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	started time.Time // just before exec
}

// startDaemon runs `BIN --config CONFIG daemon --log-format json` with its
// log in DIR/daemon.log.
func startDaemon(bin, config, dir string) (*daemon, error) {
	return startProcess(dir, bin, "--config", config, "daemon", "--log-format", "json")
}

// startProcess runs a scheduler (cronvisor or supercronic) in dir with
// stdout and stderr in DIR/daemon.log.
func startProcess(dir, bin string, args ...string) (*daemon, error) {
	d := &daemon{logPath: filepath.Join(dir, "daemon.log"), exited: make(chan struct{})}
	log, err := os.Create(d.logPath)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	d.cmd = exec.Command(bin, args...)
	d.cmd.Dir = dir
	d.cmd.Stdout, d.cmd.Stderr = log, log
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	d.started = time.Now()
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = d.cmd.Wait(); close(d.exited) }()
	return d, nil
}

func (d *daemon) pid() int { return d.cmd.Process.Pid }

// waitReady waits for the daemon's "cronvisor started" record. Polling
// the log every few milliseconds is the benchmark's cost, not the daemon's.
func (d *daemon) waitReady(timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(d.logPath)
		if err == nil && bytes.Contains(b, []byte(`"msg":"cronvisor started"`)) {
			return time.Now(), nil
		}
		select {
		case <-d.exited:
			return time.Time{}, fmt.Errorf("cronvisor exited before it was ready; log:\n%s", b)
		case <-time.After(2 * time.Millisecond):
		}
	}
	return time.Time{}, errors.New("cronvisor not ready in time")
}

// stop sends SIGTERM, waits for the exit, and kills the process group.
func (d *daemon) stop(grace time.Duration) error {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	var err error
	select {
	case <-d.exited:
	case <-time.After(grace):
		err = fmt.Errorf("%s did not stop within %v after SIGTERM; killed", filepath.Base(d.cmd.Path), grace)
	}
	_ = syscall.Kill(-d.pid(), syscall.SIGKILL)
	<-d.exited
	return err
}
