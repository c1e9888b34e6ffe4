package lock

import (
	"context"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSQLGrantCarriesItsSession: a granted PostgreSQL lock comes with this
// process's descriptor of its session's connection (found by the client
// port the server names), closed at Release. (The MySQL test server runs
// with --skip-grant-tables and names no client port.)
func TestSQLGrantCarriesItsSession(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(*testing.T, ...SQLOption) (*sqlLocker, any)
	}{
		{"postgres", func(t *testing.T, o ...SQLOption) (*sqlLocker, any) { l, db := openPostgres(t, o...); return l, db }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := tc.open(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			g, err := l.Acquire(ctx, sqlReq("sessioned", "run-s", "", time.Now()))
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
			if err := g.Release(); err != nil {
				t.Fatal(err)
			}
			if err := unix.Fstat(int(g.Session.Fd()), &st); err == nil {
				t.Error("the session descriptor is still open after Release")
			}
		})
	}
}
