package sql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/lock"
)

// cutOff drops every TCP packet to and from the server's port, as a
// partition would, until heal (also called at the test's end). It needs
// root (CI runs as root).
func cutOff(t *testing.T, port int) (heal func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test cuts a connection off with iptables and needs root (CI runs as root)")
	}
	rules := [][]string{{"-p", "tcp", "--dport", strconv.Itoa(port), "-j", "DROP"}, {"-p", "tcp", "--sport", strconv.Itoa(port), "-j", "DROP"}}
	for _, r := range rules {
		if out, err := exec.Command("iptables", append([]string{"-w", "-I", "INPUT"}, r...)...).CombinedOutput(); err != nil {
			t.Fatalf("iptables: %v: %s", err, out)
		}
	}
	var once sync.Once
	heal = func() {
		once.Do(func() {
			for _, r := range rules {
				if out, err := exec.Command("iptables", append([]string{"-w", "-D", "INPUT"}, r...)...).CombinedOutput(); err != nil {
					t.Errorf("iptables: %v: %s", err, out)
				}
			}
		})
	}
	t.Cleanup(heal)
	return heal
}

// unixAdmin is an administrator's pool on the test's database over the
// server's Unix socket, which a cut of its TCP port spares.
func unixAdmin(t *testing.T, b sqlBackend) (db *sql.DB, tcpPort int) {
	t.Helper()
	name, _ := testDBs.Load(t)
	if isPostgres(b) {
		p := postgres(t)
		return rawDB(t, "pgx", fmt.Sprintf("postgres://postgres@/%s?host=%s&port=%d&sslmode=disable", name, p.Dir(), p.Port())), p.Port()
	}
	m := mariaDB(t)
	return rawDB(t, "mysql", fmt.Sprintf("root@unix(%s)/%s", filepath.Join(m.Dir(), "mysqld.sock"), name)), m.Port()
}

// sessionAlive reports whether the server still has session id.
func sessionAlive(t *testing.T, b sqlBackend, admin *sql.DB, id int64) bool {
	t.Helper()
	q := "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?"
	if isPostgres(b) {
		q = "SELECT COUNT(*) FROM pg_stat_activity WHERE pid = $1"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var n int
	if err := admin.QueryRowContext(ctx, q, id).Scan(&n); err != nil {
		t.Fatalf("look for session %d: %v", id, err)
	}
	return n > 0
}

// waitLost waits for the lease's loss, which must come within
// 2×KeepAlive of the cut (a second more on a loaded machine).
func waitLost(t *testing.T, le *sqlLease, cut time.Time) {
	t.Helper()
	select {
	case <-le.Lost():
		t.Logf("lease lost %v after the cut (bound %v)", time.Since(cut).Round(time.Millisecond), 2*le.locker.keepAlive)
	case <-time.After(2*le.locker.keepAlive + time.Second):
		t.Fatalf("lease not lost %v after its connection was cut off", 2*le.locker.keepAlive+time.Second)
	}
}

// A PostgreSQL lock's session carries the server-side keep-alive and
// user timeout, so the server itself ends a cut-off holder's session,
// and frees its lock, within pgUserTimeout of the cut (a second more
// for the last keep-alive before it): never sooner than the holder
// sees the loss and ends its run, never hours later.
func TestPostgresCutOffHolderFreedByServer(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: waits on the servers' own timeouts; runs in the full suite (./test.sh)")
	}
	b := sqlBackends()[1]
	l, _ := b.open(t)
	admin, port := unixAdmin(t, b)
	le := mustSQL(t, l, locktest.Request("sync", "run-1", "", locktest.SlotAt(1)))
	settings := map[string]string{}
	rows, err := le.c.QueryContext(t.Context(), `SELECT name, setting FROM pg_settings WHERE name LIKE 'tcp_%'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k, v string
		_ = rows.Scan(&k, &v)
		settings[k] = v
	}
	rows.Close()
	want := map[string]string{"tcp_keepalives_idle": "5", "tcp_keepalives_interval": "1", "tcp_keepalives_count": "5", "tcp_user_timeout": "10000"}
	for k, v := range want {
		if settings[k] != v {
			t.Errorf("the lock's session has %s = %q, want %q", k, settings[k], v)
		}
	}
	cut := time.Now()
	cutOff(t, port)
	waitLost(t, le, cut)
	deadline := time.Now().Add(20 * time.Second)
	for sessionAlive(t, b, admin, le.conn) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	freed := time.Since(cut)
	t.Logf("the server ended the cut-off session %v after the cut (bound %v)", freed.Round(time.Millisecond), pgUserTimeout+DefaultKeepAlive)
	if sessionAlive(t, b, admin, le.conn) {
		t.Fatalf("the server still keeps the cut-off session %v after the cut", freed.Round(time.Millisecond))
	}
	if min := 2*DefaultKeepAlive + 2*time.Second; freed < min || freed > pgUserTimeout+2*time.Second {
		t.Errorf("the session was ended %v after the cut, want between %v (the holder has ended its run) and %v", freed, min, pgUserTimeout+2*time.Second)
	}
	var held bool
	if err := admin.QueryRowContext(t.Context(), `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory')`).Scan(&held); err != nil || held {
		t.Errorf("an advisory lock is still held after the session ended: %v, %v", held, err)
	}
	_ = le.Release()
}

// A lease lost to a silent connection leaves its session on the server
// (on MySQL for as long as the server's TCP keep-alive, hours by
// default): once the network heals, the locker that lost it ends it
// itself, and the lock is free within seconds.
func TestSQLStaleSessionEndedAfterHeal(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: waits on the servers' own timeouts; runs in the full suite (./test.sh)")
	}
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		l, _ := b.open(t)
		admin, port := unixAdmin(t, b)
		le := mustSQL(t, l, locktest.Request("sync", "run-1", "", locktest.SlotAt(1)))
		if le.session == nil || le.sess.Port == 0 {
			t.Fatalf("the lease has no session socket (port %d)", le.sess.Port)
		}
		// Cut mid-run, as a partition comes: the server's last reply
		// acknowledged, so the server has nothing to send and nothing
		// but the locker ends the session.
		time.Sleep(1500 * time.Millisecond)
		cut := time.Now()
		heal := cutOff(t, port)
		waitLost(t, le, cut)
		if err := le.Release(); err != nil { // as its supervisor does once the run is over
			t.Errorf("Release of a lost lease: %v", err)
		}
		// Past the client's own timeout: its socket is gone, nothing of
		// it will reach the server after the heal; on PostgreSQL short
		// of the server's bound.
		time.Sleep(time.Until(cut.Add(clientUserTimeout + 2*time.Second)))
		if !sessionAlive(t, b, admin, le.conn) {
			t.Fatalf("the server ended the session during the cut: the test proves nothing")
		}
		heal()
		healed := time.Now()
		for sessionAlive(t, b, admin, le.conn) && time.Since(healed) < 10*time.Second {
			time.Sleep(50 * time.Millisecond)
		}
		took := time.Since(healed)
		t.Logf("the stale session ended %v after the heal (%d ended by the locker)", took.Round(time.Millisecond), l.stale.ended.Load())
		if took > 3*time.Second {
			t.Errorf("the stale session was still there %v after the heal, want within 3 s", took.Round(time.Millisecond))
		}
		if !isPostgres(b) && l.stale.ended.Load() != 1 {
			t.Errorf("the locker ended %d stale sessions, want 1", l.stale.ended.Load())
		}
		other, _ := b.open(t)
		waitFree(t, other, "orders")
	})
}

// A stale session is ended only when it is still the lost one: the same
// id with another client port (or, on PostgreSQL, another start) is
// another session, as after a server restart, and is left alone.
func TestSQLEndStaleSparesAnotherSession(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: waits on the servers' own timeouts; runs in the full suite (./test.sh)")
	}
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		l, raw := b.open(t)
		le := mustSQL(t, l, locktest.Request("sync", "run-1", "", locktest.SlotAt(1)))
		ctx := t.Context()
		for _, tc := range []struct {
			name string
			edit func(*staleSession)
		}{
			{"another port", func(s *staleSession) { s.Port++; s.Addr = fmt.Sprintf("127.0.0.1:%d", s.Port) }},
			{"another start", func(s *staleSession) { s.Start++ }},
			{"another lock", func(s *staleSession) { s.key = l.serverKey(DefaultSQLPrefix + "other") }},
		} {
			s := staleSession{sessionID: le.sess, key: le.key}
			tc.edit(&s)
			if isPostgres(b) == (tc.name == "another lock") || (!isPostgres(b) && tc.name == "another start") {
				continue // what the backend does not compare
			}
			ended, err := l.d.endStale(ctx, l.db, s)
			if err != nil || ended {
				t.Errorf("%s: endStale = %v, %v; want the session left alone", tc.name, ended, err)
			}
			if !sessionAlive(t, b, raw, le.conn) {
				t.Fatalf("%s: the lease's session was ended", tc.name)
			}
		}
		ended, err := l.d.endStale(ctx, l.db, staleSession{sessionID: le.sess, key: le.key})
		if err != nil || !ended {
			t.Fatalf("endStale of the session itself = %v, %v; want it ended", ended, err)
		}
		select {
		case <-le.Lost():
		case <-time.After(5 * time.Second):
			t.Error("the lease whose session was ended is not lost")
		}
	})
}

// A peer that fires at the instant another host takes the lock names
// that host's run, not a holder "outside cronvisor": the holder's record
// commits a few statements after its lock is taken.
func TestSQLLockHeldNamesThePeer(t *testing.T) {
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		hosts := []*sqlLocker{}
		for range 3 {
			l, _ := b.open(t)
			hosts = append(hosts, l)
		}
		foreign, named := 0, 0
		for round := range 15 {
			var wg sync.WaitGroup
			grants := make([]lock.Grant, len(hosts))
			errs := make([]error, len(hosts))
			start := make(chan struct{})
			for i, l := range hosts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					req := locktest.Request("sync", fmt.Sprintf("run-%d-%d", round, i), fmt.Sprintf("host-%d", i), locktest.SlotAt(round+1))
					grants[i], errs[i] = l.Acquire(context.Background(), req)
				}()
			}
			close(start)
			wg.Wait()
			winner := ""
			for i, g := range grants {
				if errs[i] == nil {
					winner = g.Record().RunID
				}
			}
			for i, err := range errs {
				var held *lock.HeldError
				switch {
				case err == nil:
				case errors.As(err, &held) && held.Record.Foreign:
					foreign++
					t.Errorf("round %d: host-%d was told %v", round, i, err)
				case errors.As(err, &held) && held.Record.RunID == winner:
					named++
				case errors.Is(err, lock.ErrSlotDone):
				default:
					t.Errorf("round %d: host-%d: %v (winner %q)", round, i, err, winner)
				}
			}
			for i, g := range grants {
				if errs[i] == nil {
					_ = g.Release()
				}
			}
		}
		t.Logf("%d lock-held skips named the peer's run, %d called it foreign", named, foreign)
		if named == 0 {
			t.Error("no fire found the lock held: the test proves nothing")
		}
	})
}
