package proc

import (
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSessionLostOnlyWhenTheServerEndsIt: once its supervisor is dead,
// the keeper holds the SQL session's socket alone. A reply to a
// statement the supervisor had in flight arrives on it and is dropped:
// the lock is lost only when the server ends the session (its hang-up
// or reset), within moments of that.
func TestSessionLostOnlyWhenTheServerEndsIt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		late  []string // replies that come after the supervisor's death
		reset bool     // the server resets the connection rather than close it
	}{
		{name: "late reply, then hang-up", late: []string{"UPDATE 1"}},
		{name: "two late replies, then reset", late: []string{"pong", "UPDATE 1"}, reset: true},
		{name: "hang-up alone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			server, fd := sessionPair(t)
			k := &kept{f: keeperFlags{session: true}, files: keptFiles{session: fd}}
			lost := k.sessionLost()
			for _, reply := range tt.late {
				if _, err := server.Write([]byte(reply)); err != nil {
					t.Fatal(err)
				}
				select {
				case <-lost:
					t.Fatalf("a late reply (%q) was taken for the session's end", reply)
				case <-time.After(200 * time.Millisecond):
				}
			}
			if tt.reset {
				_ = server.(*net.TCPConn).SetLinger(0)
			}
			ended := time.Now()
			server.Close()
			select {
			case <-lost:
			case <-time.After(5 * time.Second):
				t.Fatal("the server ended the session; its keeper did not notice within 5 s")
			}
			if d := time.Since(ended); d > time.Second {
				t.Errorf("the session's end was noticed %v after it, want within 1 s", d)
			}
		})
	}
}

// sessionPair is a loopback connection: the server's end, and a
// descriptor of the client's as a dead supervisor leaves it to its
// keeper (the supervisor's own copy closed).
func sessionPair(t *testing.T) (net.Conn, int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	client, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	f, err := client.(*net.TCPConn).File()
	if err != nil {
		t.Fatal(err)
	}
	fd, err := dupCloexec(f.Fd())
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	client.Close()
	t.Cleanup(func() { unix.Close(fd) })
	return server, fd
}
