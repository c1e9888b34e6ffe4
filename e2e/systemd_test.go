package e2e

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// notifySocket listens where a service manager would: a unixgram socket
// whose datagrams the test reads in order.
type notifySocket struct {
	path string
	conn *net.UnixConn
	got  chan string
}

func listenNotify(t *testing.T) *notifySocket {
	t.Helper()
	dir, err := os.MkdirTemp("", "cvn") // short: sun_path holds 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	n := &notifySocket{path: filepath.Join(dir, "notify"), got: make(chan string, 256)}
	n.conn, err = net.ListenUnixgram("unixgram", &net.UnixAddr{Name: n.path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			k, _, err := n.conn.ReadFromUnix(buf)
			if err != nil {
				return
			}
			n.got <- string(buf[:k])
		}
	}()
	t.Cleanup(func() { n.conn.Close(); <-done })
	return n
}

// expect waits for a datagram starting with want, skipping watchdog
// pings (counted) and failing on anything else.
func (n *notifySocket) expect(t *testing.T, want string, pings *int) string {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case msg := <-n.got:
			if msg == "WATCHDOG=1" {
				*pings++
				continue
			}
			if !strings.HasPrefix(msg, want) {
				t.Fatalf("notify socket got %q, want %q", msg, want)
			}
			return msg
		case <-timeout:
			t.Fatalf("no %q on the notify socket within 15 s", want)
			return ""
		}
	}
}

// TestE2ESystemdNotify: the daemon under a fake service manager says
// READY once started, RELOADING (with MONOTONIC_USEC) then READY around a
// SIGHUP, STOPPING at SIGTERM, and pings the watchdog meanwhile.
func TestE2ESystemdNotify(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	s := newSandbox(t, `jobs:
  - name: a
    schedule: "@hourly"
    command: "true"
    timeout: 5s
`)
	n := listenNotify(t)
	d := s.startEnv([]string{"NOTIFY_SOCKET=" + n.path, "WATCHDOG_USEC=400000"}, cvBin, "--config", s.config, "daemon", "--log-format", "json")
	pings := 0
	n.expect(t, "READY=1", &pings)
	if !strings.Contains(d.stderr(), "cronvisor started") {
		t.Errorf("READY before start-up was complete; stderr:\n%s", d.stderr())
	}
	time.Sleep(time.Second) // a few watchdog intervals (0.2 s each)
	_ = syscall.Kill(d.pid(), syscall.SIGHUP)
	if msg := n.expect(t, "RELOADING=1\nMONOTONIC_USEC=", &pings); len(msg) <= len("RELOADING=1\nMONOTONIC_USEC=") {
		t.Errorf("reloading without a time: %q", msg)
	}
	n.expect(t, "READY=1", &pings)
	if pings < 2 {
		t.Errorf("%d watchdog pings in about a second at WatchdogSec=0.4s, want at least 2", pings)
	}
	_ = syscall.Kill(d.pid(), syscall.SIGTERM)
	n.expect(t, "STOPPING=1", &pings)
	if code := d.wait(20 * time.Second); code != 0 {
		t.Errorf("daemon exit %d after SIGTERM; stderr:\n%s", code, d.stderr())
	}
}
