package sql

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/lock"
)

func mustSQL(t *testing.T, l *sqlLocker, req lock.Request) *sqlLease {
	t.Helper()
	lease, err := l.Acquire(t.Context(), req)
	if err != nil {
		t.Fatalf("Acquire(%s, run %s): %v", req.Name, req.Record.RunID, err)
	}
	t.Cleanup(func() { _ = lease.Release() })
	return lease.Lease.(*sqlLease)
}

func TestSQLHolderVisibleToSecondHost(t *testing.T) {
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		a, _ := b.open(t)
		other, _ := b.open(t)
		lease := mustSQL(t, a, locktest.Request("sync", "run-1", "host-a", locktest.SlotAt(1)))
		if err := lease.SetPID(4242); err != nil {
			t.Fatalf("SetPID: %v", err)
		}
		_, err := other.Acquire(t.Context(), locktest.Request("sync", "run-2", "host-b", locktest.SlotAt(2)))
		var held *lock.HeldError
		if !errors.As(err, &held) {
			t.Fatalf("second Acquire: %v, want a *lock.HeldError", err)
		}
		if h := held.Record; h.Foreign || h.Host != "host-a" || h.RunID != "run-1" || h.PID != 4242 || !h.Slot.Equal(locktest.SlotAt(1)) {
			t.Errorf("holder = %+v, want run-1 pid 4242 on host-a", h)
		}
		st, err := other.Inspect(t.Context(), "orders")
		if err != nil || !st.Held || st.Record.RunID != "run-1" {
			t.Errorf("Inspect = %+v, %v; want held by run-1", st, err)
		}
		if err := lease.Release(); err != nil {
			t.Fatalf("Release: %v", err)
		}
		list, err := other.List(t.Context())
		if err != nil || len(list) != 1 || list[0].Held || list[0].Record.RunID != "run-1" {
			t.Errorf("List after release = %+v, %v; want orders free with run-1's record", list, err)
		}
		mustSQL(t, other, locktest.Request("sync", "run-2", "host-b", locktest.SlotAt(2)))
	})
}

func TestSQLSlotClaims(t *testing.T) {
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		l, _ := b.open(t)
		ctx := t.Context()
		first := mustSQL(t, l, locktest.Request("sync", "run-1", "", locktest.SlotAt(5)))
		_ = first.Release()
		for _, tc := range []struct {
			name string
			slot time.Time
		}{{"same slot", locktest.SlotAt(5)}, {"earlier slot", locktest.SlotAt(4)}} {
			_, err := l.Acquire(ctx, locktest.Request("sync", "run-x", "", tc.slot))
			var done *lock.SlotDoneError
			if !errors.As(err, &done) || done.Record.RunID != "run-1" {
				t.Errorf("%s: Acquire = %v, want a *lock.SlotDoneError naming run-1", tc.name, err)
			}
		}
		// The refused attempts left the lock free.
		_ = mustSQL(t, l, locktest.Request("other-job", "run-o", "", locktest.SlotAt(5))).Release()
		_ = mustSQL(t, l, locktest.Request("sync", "run-manual", "", time.Time{})).Release()
		mustSQL(t, l, locktest.Request("sync", "run-2", "", locktest.SlotAt(6)))
	})
}

// Many supervisors racing for one slot: exactly one runs it.
func TestSQLConcurrentSlotOneWinner(t *testing.T) {
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		const n = 8
		lockers := make([]*sqlLocker, n)
		for i := range lockers {
			lockers[i], _ = b.open(t)
		}
		var mu sync.Mutex
		var wins, held, done int
		var wg sync.WaitGroup
		for i, l := range lockers {
			wg.Go(func() {
				lease, err := l.Acquire(t.Context(), locktest.Request("sync", "run-"+string(rune('a'+i)), "", locktest.SlotAt(7)))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
					time.Sleep(50 * time.Millisecond) // overlap the others' attempts
					_ = lease.Release()
				case errors.Is(err, lock.ErrLocked):
					held++
				case errors.Is(err, lock.ErrSlotDone):
					done++
				default:
					t.Errorf("Acquire: %v", err)
				}
			})
		}
		wg.Wait()
		if wins != 1 {
			t.Errorf("%d supervisors ran the slot (%d held, %d done), want 1", wins, held, done)
		}
	})
}

func TestSQLFencingTokensIncrease(t *testing.T) {
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		a, _ := b.open(t)
		other, _ := b.open(t)
		var last int64
		for i, l := range []*sqlLocker{a, other, a, other} {
			lease := mustSQL(t, l, locktest.Request("sync", "run", "", time.Time{}))
			if tok := lease.fence; tok <= last {
				t.Errorf("acquisition %d: token %d, not above %d", i, tok, last)
			} else {
				last = tok
			}
			_ = lease.Release()
		}
		if last != 4 {
			t.Errorf("last token = %d, want 4", last)
		}
	})
}

// A session outside cronvisor taking the documented name or key is
// respected and shown as foreign.
func TestSQLForeignHolder(t *testing.T) {
	long := "a-lock-name-long-enough-that-prefix-and-name-pass-mysqls-sixty-four-limit"
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		l, raw := b.open(t)
		ctx := t.Context()
		for _, name := range []string{"orders", long} {
			c, err := raw.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			b.takeForeign(t, c, DefaultSQLPrefix+name)
			req := locktest.Request("sync", "run-1", "", locktest.SlotAt(1))
			req.Name = name
			_, err = l.Acquire(ctx, req)
			var held *lock.HeldError
			if !errors.As(err, &held) || !held.Record.Foreign || held.Record.PID == 0 {
				t.Errorf("%s: Acquire = %v, want a *lock.HeldError with a foreign holder", name, err)
			} else if !strings.Contains(held.Record.Cmdline, b.name) {
				t.Errorf("%s: foreign holder %q does not say it is a %s session", name, held.Record.Cmdline, b.name)
			}
			st, err := l.Inspect(ctx, name)
			if err != nil || !st.Held || !st.Record.Foreign {
				t.Errorf("%s: Inspect = %+v, %v; want held by a foreign session", name, st, err)
			}
			_ = c.Close() // its session, and with it the lock, goes back to the pool: drop it
			discard(c)
		}
	})
}

// Two cronvisors on one MySQL server but on two databases with the same
// prefix take the same GET_LOCK names; the one that finds a lock held
// cannot read the other's record and says why.
func TestMySQLHolderOnAnotherDatabase(t *testing.T) {
	m := mariaDB(t)
	var lockers []*MySQLLocker
	var dbs []string
	for range 2 {
		db := sqlServers.NewDB(t, m.CreateDB)
		l, err := NewMySQLLocker(m.DSN(db))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Close() })
		lockers, dbs = append(lockers, l), append(dbs, db)
	}
	ctx := t.Context()
	g, err := lockers[0].Acquire(ctx, locktest.Request("sync", "run-1", "", locktest.SlotAt(1)))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	_, err = lockers[1].Acquire(ctx, locktest.Request("sync", "run-2", "", locktest.SlotAt(1)))
	var held *lock.HeldError
	want := "on database " + dbs[0] + "; lock names are the server's: give each database's cronvisor a prefix of its own"
	if !errors.As(err, &held) || !held.Record.Foreign || !strings.Contains(held.Record.Cmdline, want) {
		t.Fatalf("Acquire on the second database = %v, want a foreign holder saying %q", err, want)
	}
	st, err := lockers[0].Inspect(ctx, "orders")
	if err != nil || st.Record.Foreign || st.Record.Job != "sync" {
		t.Errorf("Inspect on the holder's database = %+v, %v; want its own record", st, err)
	}
}

// Killing the holder's connection on the server is lease loss, seen
// within the documented bound (2×KeepAlive).
func TestSQLKilledConnectionIsLost(t *testing.T) {
	const keepAlive = 200 * time.Millisecond
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		l, raw := b.open(t, WithKeepAlive(keepAlive))
		lease := mustSQL(t, l, locktest.Request("sync", "run-1", "", locktest.SlotAt(1)))
		if g := lease.grant(); !g.Tethered || g.MinLifeLeft != 0 || g.File != nil {
			t.Errorf("grant Tethered %v, MinLifeLeft %s, lock.File %v; want true, 0 (the server frees the lock with the session), nil",
				g.Tethered, g.MinLifeLeft, g.File)
		}
		killed := time.Now()
		if _, err := raw.ExecContext(t.Context(), b.killConn, lease.conn); err != nil {
			t.Fatalf("kill the holder's connection: %v", err)
		}
		select {
		case <-lease.Lost():
		case <-time.After(10 * 2 * keepAlive): // generous: a loaded machine
			t.Fatalf("lease not lost %s after its connection was killed", 20*keepAlive)
		}
		t.Logf("lost %s after the kill (bound %s)", time.Since(killed).Round(time.Millisecond), 2*keepAlive)
		if err := lease.Release(); err != nil {
			t.Errorf("Release of a lost lease: %v", err)
		}
		other, _ := b.open(t)
		waitFree(t, other, "orders")
		mustSQL(t, other, locktest.Request("sync", "run-2", "", locktest.SlotAt(2)))
	})
}

// A stopped server: the held lease is lost, a new fire is refused as
// unavailable (not run unguarded), and all is well once it is back.
func TestSQLServerDown(t *testing.T) {
	const keepAlive = 200 * time.Millisecond
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		l, _ := b.open(t, WithKeepAlive(keepAlive))
		lease := mustSQL(t, l, locktest.Request("sync", "run-1", "", locktest.SlotAt(1)))
		start := b.stop(t)
		restarted := false
		defer func() {
			if !restarted {
				start()
			}
		}()
		select {
		case <-lease.Lost():
		case <-time.After(10 * time.Second):
			t.Fatal("lease not lost with the server down")
		}
		_ = lease.Release()
		began := time.Now()
		_, err := l.Acquire(context.Background(), locktest.Request("sync", "run-2", "", locktest.SlotAt(2)))
		if !errors.Is(err, lock.ErrUnavailable) {
			t.Errorf("Acquire with the server down: %v, want lock.ErrUnavailable", err)
		}
		if d := time.Since(began); d > 5*time.Second {
			t.Errorf("Acquire with the server down took %s", d)
		}
		start()
		restarted = true
		deadline := time.Now().Add(10 * time.Second)
		for {
			lease, err := l.Acquire(t.Context(), locktest.Request("sync", "run-3", "", locktest.SlotAt(3)))
			if err == nil {
				_ = lease.Release()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("Acquire after the restart: %v", err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

func TestSQLNames(t *testing.T) {
	long := strings.Repeat("x", 80)
	if got := MySQLLockName("cronvisor:orders"); got != "cronvisor:orders" {
		t.Errorf("MySQLLockName(short) = %q", got)
	}
	got := MySQLLockName(long)
	if len(got) != MySQLNameLimit || !strings.HasPrefix(got, long[:47]+"~") || got != MySQLLockName(long) {
		t.Errorf("MySQLLockName(80 x) = %q, want 47 x, '~' and 16 hex digits", got)
	}
	if MySQLLockName(long+"y") == got {
		t.Error("two long names share a MySQL name")
	}
	if PostgresLockKey("cronvisor:orders") != 8007620273891346568 { // from psql, with the documented expression
		t.Errorf("PostgresLockKey(cronvisor:orders) = %d", PostgresLockKey("cronvisor:orders"))
	}
}

// A lock whose session died is free on the server at once, before the
// keep-alive notices; the same supervisor's next fire is still refused
// while its lease is not released, so it never runs beside itself.
func TestSQLOwnUnreleasedLeaseRefuses(t *testing.T) {
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		l, raw := b.open(t, WithKeepAlive(time.Hour))
		lease := mustSQL(t, l, locktest.Request("sync", "run-1", "", locktest.SlotAt(1)))
		if _, err := raw.ExecContext(t.Context(), b.killConn, lease.conn); err != nil {
			t.Fatalf("kill the holder's connection: %v", err)
		}
		_, err := l.Acquire(t.Context(), locktest.Request("sync", "run-2", "", locktest.SlotAt(2)))
		var held *lock.HeldError
		if !errors.As(err, &held) || held.Record.RunID != "run-1" {
			t.Fatalf("Acquire beside an unreleased lease: %v, want held by run-1", err)
		}
		_ = lease.Release()
		waitFree(t, l, "orders") // the server ends a killed session asynchronously
		mustSQL(t, l, locktest.Request("sync", "run-3", "", locktest.SlotAt(3)))
	})
}

// waitFree waits until the server has let go of a killed session's lock.
func waitFree(t *testing.T, l *sqlLocker, name string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		st, err := l.Inspect(t.Context(), name)
		if err == nil && !st.Held {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("lock %s still held 5 s after its session was killed: %+v, %v", name, st, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// movedSession plays a pooler in transaction mode: the statement after
// taking the lock runs on a session that does not hold it.
type movedSession struct{ sqlDialect }

func (movedSession) stillHeld(context.Context, *sql.Conn, string) (bool, error) { return false, nil }

func TestSQLSessionMovedIsRefused(t *testing.T) {
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		l, _ := b.open(t)
		real := l.d
		l.d = movedSession{real}
		_, err := l.Acquire(t.Context(), locktest.Request("sync", "run-1", "", locktest.SlotAt(1)))
		if !errors.Is(err, ErrSessionMoved) || !strings.Contains(err.Error(), "PgBouncer") {
			t.Fatalf("Acquire through a moving session: %v, want ErrSessionMoved naming the likely pooler", err)
		}
		l.d = real
		waitFree(t, l, "orders")
		mustSQL(t, l, locktest.Request("sync", "run-2", "", locktest.SlotAt(1))) // the refused fire claimed nothing
	})
}
