package sql

import (
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// socketOf is a duplicate of nc's TCP socket (see Grant.Session), with
// the client's keep-alive set (clientKeepAlive); nil for any other kind
// of connection (a Unix socket): the run's keeper then ends the run with
// its supervisor, as before. Taken from the connection itself, never
// looked up by its local port: the kernel gives one ephemeral port to
// connections to different servers at once, so a port names no socket.
func socketOf(nc net.Conn) *os.File {
	for {
		inner, ok := nc.(interface{ NetConn() net.Conn }) // TLS
		if !ok {
			break
		}
		nc = inner.NetConn()
	}
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	dup := -1
	if rc.Control(func(fd uintptr) { dup, _ = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }) != nil || dup < 0 {
		return nil
	}
	clientKeepAlive(dup)
	return os.NewFile(uintptr(dup), "session:"+tc.LocalAddr().String())
}

// The client's side of a lock's connection, for when nothing speaks on
// it: once its supervisor is dead, the run's keeper only listens, and a
// cut-off server would never be heard of. Probes after clientIdle of
// silence, and the connection given up (an error the keeper's poll
// sees, which ends the run) once nothing has come back for
// clientUserTimeout: well within the server's own bound (pgUserTimeout),
// so the holder gives up first.
const (
	clientIdle        = 2 // seconds
	clientInterval    = 1
	clientCount       = 3
	clientUserTimeout = 4 * time.Second
)

// clientKeepAlive sets them on the socket fd (options of the socket, so
// every descriptor of it, the driver's too). A failure leaves the
// system's defaults: the supervisor's own keep-alive still sees a cut.
func clientKeepAlive(fd int) {
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1)
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, clientIdle)
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, clientInterval)
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPCNT, clientCount)
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(clientUserTimeout.Milliseconds()))
}
