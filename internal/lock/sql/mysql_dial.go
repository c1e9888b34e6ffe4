package sql

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/lock"
)

// mysqlConnsKept bounds mysqlConns: connection ids only grow, so the
// oldest entries are of connections long closed.
const mysqlConnsKept = 512

// mysqlConns knows each connection a MySQL locker dialled, by the
// connection id the server gave it in its greeting (the handshake
// packet, which it sends first): it is how a lock's session finds its
// socket (socketOf) and tells itself apart when stale (endStale),
// whatever the server's process list shows.
type mysqlConns struct {
	mu  sync.Mutex
	ids map[int64]dialled
}

// dialled is one connection of mysqlConns and its local address.
type dialled struct {
	local netip.AddrPort
	conn  *net.TCPConn
}

func newMySQLConns() *mysqlConns { return &mysqlConns{ids: map[int64]dialled{}} }

// dial is the driver's DialFunc: the connection is dialled as the driver
// would, and its greeting read without consuming it (MSG_PEEK), so the
// driver reads it as ever. A connection whose greeting cannot be read
// is returned all the same: it only lacks an entry.
func (m *mysqlConns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	if id, ok := peekConnID(ctx, tc); ok {
		if local, err := netip.ParseAddrPort(tc.LocalAddr().String()); err == nil {
			m.add(id, dialled{local, tc})
		}
	}
	return c, nil
}

func (m *mysqlConns) add(id int64, d dialled) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ids[id] = d
	if len(m.ids) <= mysqlConnsKept {
		return
	}
	for old := range m.ids {
		if old <= id-mysqlConnsKept {
			delete(m.ids, old)
		}
	}
	// Ids start again after a server restart: then any old entry goes.
	for old := range m.ids {
		if len(m.ids) <= mysqlConnsKept {
			break
		}
		if old != id {
			delete(m.ids, old)
		}
	}
}

// conn is connection id as dialled, false if unknown.
func (m *mysqlConns) conn(id int64) (dialled, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.ids[id]
	return d, ok
}

// peekConnID reads the connection id from the server's greeting, left
// in the socket's queue for the driver.
func peekConnID(ctx context.Context, tc *net.TCPConn) (int64, bool) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(lock.OpTimeout)
	}
	if tc.SetReadDeadline(deadline) != nil {
		return 0, false
	}
	defer func() { _ = tc.SetReadDeadline(time.Time{}) }()
	rc, err := tc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var buf [256]byte
	var id int64
	var found bool
	err = rc.Read(func(fd uintptr) bool {
		n, _, err := unix.Recvfrom(int(fd), buf[:], unix.MSG_PEEK)
		if errors.Is(err, unix.EAGAIN) {
			return false // wait for it
		}
		if err != nil || n == 0 {
			return true // the driver's own read will say what is wrong
		}
		var more bool
		id, found, more = parseGreeting(buf[:n])
		return !more || n == len(buf)
	})
	return id, err == nil && found
}

// parseGreeting reads the connection id of a handshake packet (protocol
// 10): a 4-byte header, the protocol version, the server's version ending
// in a NUL, then the id, 4 bytes little-endian. more: not all of it has
// arrived yet.
func parseGreeting(b []byte) (id int64, ok, more bool) {
	if len(b) < 5 {
		return 0, false, true
	}
	if b[4] != 10 { // an error packet (too many connections), or another protocol
		return 0, false, false
	}
	for i := 5; i < len(b); i++ {
		if b[i] != 0 {
			continue
		}
		if len(b) < i+5 {
			return 0, false, true
		}
		return int64(binary.LittleEndian.Uint32(b[i+1 : i+5])), true, false
	}
	return 0, false, true
}
