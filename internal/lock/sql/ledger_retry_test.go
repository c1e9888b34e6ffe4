package sql

import (
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/locktest"
)

// killSession ends the lease's session from outside and waits until the
// server has let go of it, while the lease (with a keep-alive too long to
// notice) still thinks it holds.
func killSession(t *testing.T, b sqlBackend, l *sqlLocker, lease *sqlLease) {
	t.Helper()
	admin, _ := b.open(t)
	if _, err := admin.db.ExecContext(t.Context(), admin.d.rebind(b.killConn), lease.conn); err != nil {
		t.Fatalf("kill session %d: %v", lease.conn, err)
	}
	waitFree(t, l, "orders")
}

// The lock's connection died with the run's end (the session killed, the
// network cut): the outcome is written on another connection at once,
// not left "running".
func TestSQLLedgerOutcomeAfterTheLocksConnectionDied(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: waits on the servers' own timeouts; runs in the full suite (./test.sh)")
	}
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		l, _ := b.open(t, WithKeepAlive(time.Hour))
		lease := mustSQL(t, l, locktest.Request("sync", "run-1", "host-a", locktest.SlotAt(7)))
		killSession(t, b, l, lease)
		if err := lease.SetOutcome(run.OK, "run-1"); err != nil {
			t.Fatalf("SetOutcome after the lock's connection died: %v", err)
		}
		if _, outcome, runID, _ := ledgerRowOf(t, l, "sync", locktest.SlotAt(7)); outcome != "ok" || runID != "run-1" {
			t.Errorf("row = %q by %s, want ok by run-1", outcome, runID)
		}
	})
}

// The server is away when the run ends: the outcome's write fails, says
// it will be retried, and lands once the server is back; a locker closed
// with a write pending stops its retries at once.
func TestSQLLedgerOutcomeRetriedWhenTheServerIsBack(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: restarts the server; runs in the full suite (./test.sh)")
	}
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		l, _ := b.open(t, WithKeepAlive(time.Hour))
		other, _ := b.open(t, WithKeepAlive(time.Hour))
		lease := mustSQL(t, l, locktest.Request("sync", "run-1", "host-a", locktest.SlotAt(8)))
		req2 := locktest.Request("sync2", "run-2", "host-b", locktest.SlotAt(8))
		req2.Name = "orders2"
		lease2 := mustSQL(t, other, req2)
		start := b.stop(t)
		restarted := false
		defer func() {
			if !restarted {
				start()
			}
		}()
		// PostgreSQL's backends are sessions of their own, outside the
		// group the stop killed: each ends when it sees the postmaster gone.
		for _, le := range []*sqlLease{lease, lease2} {
			for deadline := time.Now().Add(5 * time.Second); le.c.PingContext(t.Context()) == nil; {
				if time.Now().After(deadline) {
					t.Fatal("the lock's session still answers 5 s after the server stopped")
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		err := lease.SetOutcome(run.Failed, "run-1b")
		if err == nil || !strings.Contains(err.Error(), "retrying in the background") {
			t.Fatalf("SetOutcome with the server down: %v, want an error saying it retries", err)
		}
		if err := lease2.SetOutcome(run.OK, "run-2"); err == nil {
			t.Fatal("SetOutcome with the server down succeeded")
		}
		began := time.Now()
		if err := other.Close(); err != nil {
			t.Logf("close: %v", err)
		}
		if d := time.Since(began); d > 2*time.Second {
			t.Errorf("Close with an outcome pending took %s", d)
		}
		start()
		restarted = true
		back := time.Now()
		var outcome, runID string
		for deadline := time.Now().Add(30 * time.Second); ; {
			if _, outcome, runID, _ = ledgerRowOf(t, l, "sync", locktest.SlotAt(8)); outcome == "failed" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("row still %q 30 s after the server came back", outcome)
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("outcome written %s after the server was back", time.Since(back).Round(time.Millisecond))
		if runID != "run-1b" {
			t.Errorf("row ended by %s, want run-1b", runID)
		}
		if err := l.db.QueryRowContext(t.Context(), l.d.rebind(`SELECT outcome FROM cronvisor_slots WHERE name = ? AND job = ?`),
			l.prefix+"orders2", "sync2").Scan(&outcome); err != nil || outcome != "running" {
			t.Errorf("the closed locker's row = %q, %v; want it left running (its retries stopped)", outcome, err)
		}
	})
}
