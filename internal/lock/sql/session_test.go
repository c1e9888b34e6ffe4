package sql

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/harness/locktest"

	"golang.org/x/sys/unix"
)

// TestSQLGrantCarriesItsSession: a granted lock comes with this
// process's descriptor of its session's connection (the port the server
// names, PostgreSQL, or that greeted the session's id, MySQL), with the
// client's keep-alive and user timeout set, closed at Release.
func TestSQLGrantCarriesItsSession(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(*testing.T, ...SQLOption) (*sqlLocker, any)
	}{
		{"postgres", func(t *testing.T, o ...SQLOption) (*sqlLocker, any) { l, db := openPostgres(t, o...); return l, db }},
		{"mysql", func(t *testing.T, o ...SQLOption) (*sqlLocker, any) { l, db := openMariaDB(t, o...); return l, db }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := tc.open(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			g, err := l.Acquire(ctx, locktest.Request("sessioned", "run-s", "", time.Now()))
			if err != nil {
				t.Fatal(err)
			}
			if g.Session == nil {
				t.Fatal("the grant has no session descriptor")
			}
			var st unix.Stat_t
			if err := unix.Fstat(int(g.Session.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
				t.Fatalf("session descriptor is not a socket: %v mode %o", err, st.Mode)
			}
			// The port the server names (PostgreSQL) or greeted (MySQL).
			sa, err := unix.Getsockname(int(g.Session.Fd()))
			if in4, ok := sa.(*unix.SockaddrInet4); err != nil || !ok || in4.Port != g.Lease.(*sqlLease).sess.Port {
				t.Errorf("the session descriptor is the socket of %v (%v), want the session's port %d", sa, err, g.Lease.(*sqlLease).sess.Port)
			}
			ut, err := unix.GetsockoptInt(int(g.Session.Fd()), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT)
			if err != nil || ut != int(clientUserTimeout.Milliseconds()) {
				t.Errorf("the session's TCP_USER_TIMEOUT is %d ms (%v), want %v", ut, err, clientUserTimeout)
			}
			if err := g.Release(); err != nil {
				t.Fatal(err)
			}
			if err := unix.Fstat(int(g.Session.Fd()), &st); err == nil {
				t.Error("the session descriptor is still open after Release")
			}
		})
	}
}

// The connection id of a MySQL server's greeting, as the handshake
// packet carries it, also when only part of it has arrived.
func TestParseGreeting(t *testing.T) {
	greeting := append([]byte{0x5b, 0, 0, 0, 10}, "10.11.19-MariaDB\x00"...)
	greeting = append(greeting, 0x2a, 0x01, 0, 0, 'x', 'y')
	for _, tc := range []struct {
		name     string
		b        []byte
		id       int64
		ok, more bool
	}{
		{"whole", greeting, 0x12a, true, false},
		{"header only", greeting[:4], 0, false, true},
		{"in the version", greeting[:10], 0, false, true},
		{"id cut", greeting[:len(greeting)-4], 0, false, true},
		{"error packet", []byte{7, 0, 0, 0, 0xff, 0x10, 0x04}, 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, ok, more := parseGreeting(tc.b)
			if id != tc.id || ok != tc.ok || more != tc.more {
				t.Errorf("parseGreeting = %d, %v, %v; want %d, %v, %v", id, ok, more, tc.id, tc.ok, tc.more)
			}
		})
	}
}

// mysqlConns keeps at most mysqlConnsKept entries, the newest among them,
// also when ids start again (a server restart).
func TestMySQLConnsBounded(t *testing.T) {
	m := newMySQLConns()
	for id := int64(1); id <= 3*mysqlConnsKept; id++ {
		m.add(id, dialled{local: netip.MustParseAddrPort("127.0.0.1:40000")})
	}
	for id := int64(1); id <= 10; id++ { // restarted: small ids again
		m.add(id, dialled{local: netip.MustParseAddrPort("127.0.0.1:40001")})
	}
	if len(m.ids) > mysqlConnsKept {
		t.Errorf("%d entries, want at most %d", len(m.ids), mysqlConnsKept)
	}
	if d, ok := m.conn(10); !ok || d.local.Port() != 40001 {
		t.Errorf("conn(10) = %v, %v; want the newest connection", d.local, ok)
	}
}

// TestSocketOfTellsSharedPortsApart: two connections from one local
// port to two servers, as the kernel gives an ephemeral port out again
// for another destination: each lock's socket is its own connection's.
func TestSocketOfTellsSharedPortsApart(t *testing.T) {
	var servers []net.Listener
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		servers = append(servers, ln)
	}
	reuse := func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1) })
		return errors.Join(err, serr)
	}
	var conns []net.Conn
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}
	for _, ln := range servers {
		c, err := (&net.Dialer{LocalAddr: local, Control: reuse}).Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
		local = c.LocalAddr().(*net.TCPAddr) // the second from the first's port
	}
	if a, b := conns[0].LocalAddr().String(), conns[1].LocalAddr().String(); a != b {
		t.Fatalf("the two connections are from %s and %s, want one port", a, b)
	}
	for i, c := range conns {
		f := socketOf(c)
		if f == nil {
			t.Fatalf("connection %d: no socket", i)
		}
		defer f.Close()
		peer, err := unix.Getpeername(int(f.Fd()))
		in4, ok := peer.(*unix.SockaddrInet4)
		if want := servers[i].Addr().(*net.TCPAddr).Port; err != nil || !ok || in4.Port != want {
			t.Errorf("connection %d: the socket's peer is %v (%v), want port %d", i, peer, err, want)
		}
		if ut, err := unix.GetsockoptInt(int(f.Fd()), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT); err != nil || ut != int(clientUserTimeout.Milliseconds()) {
			t.Errorf("connection %d: TCP_USER_TIMEOUT %d ms (%v), want %v", i, ut, err, clientUserTimeout)
		}
	}
	uc, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: t.TempDir() + "/s", Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	if f := socketOf(uc); f != nil {
		f.Close()
		t.Error("a Unix socket's connection gave a session socket, want none (the keeper ends such a run with its supervisor)")
	}
}

// BenchmarkSocketOf: a granted lock's socket for its run, on a host with
// busyConns other connections (the daemon's and everyone else's).
func BenchmarkSocketOf(b *testing.B) {
	const busyConns = 500
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	var conns []net.Conn
	for range busyConns {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c, s)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	session := conns[len(conns)-2]
	for b.Loop() {
		f := socketOf(session)
		if f == nil {
			b.Fatal("no socket")
		}
		f.Close()
	}
}
