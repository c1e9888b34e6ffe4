package sql

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// sessionSocket finds this process's descriptor of the connection whose
// local TCP port is port (the lock's session: see sessionID) and returns
// a duplicate of it (see Grant.Session), with the client's keep-alive
// set (clientKeepAlive). Nil if it cannot be told (a Unix socket
// connection, an unreadable /proc): the run's keeper then ends the run
// with its supervisor, as before.
func sessionSocket(port int) *os.File {
	if port <= 0 {
		return nil
	}
	inode := socketInode(port)
	if inode == "" {
		return nil
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	for _, e := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err != nil || target != "socket:["+inode+"]" {
			continue
		}
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			return nil
		}
		dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return nil
		}
		clientKeepAlive(dup)
		return os.NewFile(uintptr(dup), fmt.Sprintf("session:%d", port))
	}
	return nil
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

// socketInode is the inode of this process's established TCP socket
// whose local port is port, "" if none.
func socketInode(port int) string {
	want := fmt.Sprintf(":%04X", port)
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local_address rem_address st ... uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) > 9 && strings.HasSuffix(fields[1], want) && fields[3] == "01" {
				f.Close()
				return fields[9]
			}
		}
		f.Close()
	}
	return ""
}
