package lock

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// sessionSocket finds this process's descriptor of the connection c
// whose server session holds a lock, and returns a duplicate of it (see
// Grant.Session): the server says the session's client port, and
// /proc/self/net names the socket with that local port. Nil if it cannot
// be told (a Unix socket connection, an unreadable /proc): the run's
// keeper then ends the run with its supervisor, as before.
func (l *sqlLocker) sessionSocket(ctx context.Context, c *sql.Conn) *os.File {
	port, err := l.d.clientPort(ctx, c)
	if err != nil || port <= 0 {
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
		return os.NewFile(uintptr(dup), fmt.Sprintf("session:%d", port))
	}
	return nil
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
