package fleet

import (
	"net"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The shared store's pool, and how its connections notice a server that
// went silent (a cut link leaves a half-open connection, which no read
// or write ever fails on its own: TCP retransmits for many minutes).
const (
	maxIdleConns = 2
	// An idle connection is probed after keepAliveIdle of silence and
	// ended when the probes go unanswered; data left unacknowledged for
	// userTimeout ends it too, whatever its keepalive says.
	keepAliveIdle     = 5 * time.Second
	keepAliveInterval = time.Second
	keepAliveCount    = 5
	userTimeout       = 10 * time.Second
)

// dialer is the client side's dialer: TCP keepalives and TCP_USER_TIMEOUT
// on every TCP connection (a unix socket needs neither).
func dialer() *net.Dialer {
	return &net.Dialer{
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: keepAliveIdle,
			Interval: keepAliveInterval, Count: keepAliveCount},
		Control: func(network, _ string, c syscall.RawConn) error {
			if !strings.HasPrefix(network, "tcp") {
				return nil
			}
			var serr error
			err := c.Control(func(fd uintptr) {
				serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(userTimeout.Milliseconds()))
			})
			if err != nil {
				return err
			}
			return serr
		},
	}
}

// DropIdleConns closes the pool's idle connections, so that the next
// call dials afresh: after a call that got no answer, the others may be
// half-open too, and each would hang a call until its deadline.
func (s *Store) DropIdleConns() {
	s.db.SetMaxIdleConns(0)
	s.db.SetMaxIdleConns(maxIdleConns)
}
