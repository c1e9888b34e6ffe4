package sql

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"cronvisor/internal/harness/locktest"

	"golang.org/x/sys/unix"
)

// TestSQLGrantCarriesItsSession: a granted lock comes with this
// process's descriptor of its session's connection (found by its client
// port: PostgreSQL names it, MySQL's greeting gave the connection id when
// it was dialled), with the client's keep-alive and user timeout set,
// closed at Release.
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
		m.add(id, netip.MustParseAddrPort("127.0.0.1:40000"))
	}
	for id := int64(1); id <= 10; id++ { // restarted: small ids again
		m.add(id, netip.MustParseAddrPort("127.0.0.1:40001"))
	}
	if len(m.ids) > mysqlConnsKept {
		t.Errorf("%d entries, want at most %d", len(m.ids), mysqlConnsKept)
	}
	if a, ok := m.local(10); !ok || a.Port() != 40001 {
		t.Errorf("local(10) = %v, %v; want the newest connection's address", a, ok)
	}
}
