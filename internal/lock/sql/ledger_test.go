package sql

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/lock"
)

// ledgerRowOf reads the claim row of job's slot under lock "orders".
func ledgerRowOf(t *testing.T, l *sqlLocker, job string, slot time.Time) (fence int64, outcome, runID, host string) {
	t.Helper()
	err := l.db.QueryRowContext(t.Context(), l.d.rebind(`SELECT fencing_token, outcome, run_id, host FROM cronvisor_slots
		WHERE name = ? AND job = ? AND slot_ns = ?`), l.prefix+"orders", job, slot.UnixNano()).
		Scan(&fence, &outcome, &runID, &host)
	if err != nil {
		t.Fatalf("claim row of %s at %s: %v", job, slot, err)
	}
	return fence, outcome, runID, host
}

// Two hosts taking the same lock for successive slots: each claim's token
// is its grant's, and above every earlier one.
func TestSQLLedgerTokensRiseAcrossHosts(t *testing.T) {
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		a, _ := b.open(t)
		other, _ := b.open(t)
		hosts := []struct {
			l    *sqlLocker
			name string
		}{{a, "host-a"}, {other, "host-b"}}
		var last int64
		for i := range 6 {
			h := hosts[i%2]
			g, err := h.l.Acquire(t.Context(), locktest.Request("sync", fmt.Sprintf("run-%d", i), h.name, locktest.SlotAt(i+1)))
			if err != nil {
				t.Fatalf("slot %d on %s: %v", i+1, h.name, err)
			}
			fence, outcome, _, host := ledgerRowOf(t, a, "sync", locktest.SlotAt(i+1))
			if g.FencingToken <= last || fence != g.FencingToken || outcome != "running" || host != h.name {
				t.Errorf("slot %d on %s: grant token %d, row token %d %q on %s; want above %d, equal, running",
					i+1, h.name, g.FencingToken, fence, outcome, host, last)
			}
			last = g.FencingToken
			_ = g.Release()
		}
	})
}

// The claim row starts "running" and ends with the run's outcome, set
// before the release; a manual run's lease, which claimed nothing, sets
// nothing.
func TestSQLLedgerOutcome(t *testing.T) {
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		l, _ := b.open(t)
		g, err := l.Acquire(t.Context(), locktest.Request("sync", "run-1", "host-a", locktest.SlotAt(3)))
		if err != nil {
			t.Fatal(err)
		}
		if _, outcome, _, _ := ledgerRowOf(t, l, "sync", locktest.SlotAt(3)); outcome != "running" {
			t.Errorf("outcome while held = %q, want running", outcome)
		}
		if err := g.Lease.(lock.OutcomeSetter).SetOutcome(run.Failed, "run-1b"); err != nil {
			t.Fatalf("SetOutcome: %v", err)
		}
		_ = g.Release()
		if _, outcome, runID, _ := ledgerRowOf(t, l, "sync", locktest.SlotAt(3)); outcome != "failed" || runID != "run-1b" {
			t.Errorf("row after the end = %q by %s, want failed by run-1b (the last attempt)", outcome, runID)
		}
		manual := mustSQL(t, l, locktest.Request("sync", "run-m", "host-a", time.Time{}))
		if err := manual.SetOutcome(run.OK, "run-m"); err != nil {
			t.Errorf("SetOutcome of a manual run: %v", err)
		}
		if _, outcome, _, _ := ledgerRowOf(t, l, "sync", locktest.SlotAt(3)); outcome != "failed" {
			t.Errorf("a manual run's end changed the slot's row to %q", outcome)
		}
	})
}

// A second host's fire for a claimed slot is refused naming the host, the
// run and the slot's outcome.
func TestSQLLedgerSlotDoneNamesHost(t *testing.T) {
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		a, _ := b.open(t)
		other, _ := b.open(t)
		g := mustSQL(t, a, locktest.Request("sync", "run-1", "host-a", locktest.SlotAt(5)))
		_ = g.SetOutcome(run.OK, "run-1")
		_ = g.Release()
		_, err := other.Acquire(t.Context(), locktest.Request("sync", "run-2", "host-b", locktest.SlotAt(5)))
		var done *lock.SlotDoneError
		if !errors.As(err, &done) {
			t.Fatalf("second host: %v, want a *lock.SlotDoneError", err)
		}
		if r := done.Record; r.Host != "host-a" || r.RunID != "run-1" || r.Job != "sync" || !r.Slot.Equal(locktest.SlotAt(5)) || done.Outcome != "ok" {
			t.Errorf("lock.SlotDoneError = %+v outcome %q, want run-1 on host-a, slot 5, ok", r, done.Outcome)
		}
	})
}

func TestSQLLedgerLastSlots(t *testing.T) {
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		l, _ := b.open(t)
		elsewhere, _ := b.open(t, WithSQLPrefix("other:"))
		ctx := t.Context()
		sync, idle := lock.SlotKey{Lock: "orders", Job: "sync"}, lock.SlotKey{Lock: "orders", Job: "idle"}
		got, err := l.LastSlots(ctx, []lock.SlotKey{sync, idle})
		if err != nil || len(got) != 0 {
			t.Fatalf("LastSlots of an empty ledger = %v, %v; want none", got, err)
		}
		_ = mustSQL(t, l, locktest.Request("sync", "run-1", "", locktest.SlotAt(2))).Release()
		_ = mustSQL(t, l, locktest.Request("sync", "run-2", "", locktest.SlotAt(3))).Release()
		_ = mustSQL(t, elsewhere, locktest.Request("sync", "run-x", "", locktest.SlotAt(9))).Release() // another installation's
		steps := []struct {
			name  string
			claim *lock.MissedClaim
			want  time.Time
		}{
			{"newest run", nil, locktest.SlotAt(3)},
			{"missed claim", &lock.MissedClaim{Lock: "orders", Job: "sync", First: locktest.SlotAt(4), Through: locktest.SlotAt(6), RunID: "m"}, locktest.SlotAt(6)},
		}
		for _, st := range steps {
			if st.claim != nil {
				if won, _, err := l.ClaimMissed(ctx, *st.claim); !won || err != nil {
					t.Fatalf("%s: ClaimMissed = %v, %v", st.name, won, err)
				}
			}
			got, err := l.LastSlots(ctx, []lock.SlotKey{sync, idle})
			if _, has := got[idle]; err != nil || !got[sync].Equal(st.want) || has {
				t.Errorf("%s: LastSlots = %v, %v; want sync at %s, idle absent", st.name, got, err, st.want)
			}
		}
		// The missed claim covers its slots: a fire of one of them is refused.
		_, err = l.Acquire(ctx, locktest.Request("sync", "run-late", "", locktest.SlotAt(5)))
		var done *lock.SlotDoneError
		if !errors.As(err, &done) || done.Outcome != "missed" || done.Record.RunID != "m" {
			t.Errorf("fire of a slot a missed claim covers: %v, want a *lock.SlotDoneError naming m, missed", err)
		}
		_ = mustSQL(t, l, locktest.Request("sync", "run-3", "", locktest.SlotAt(7))).Release()
	})
}

// Hosts coming back at once claim the same missed slots: one wins, every
// other loses naming it; a later claim inside what was claimed loses too.
func TestSQLLedgerClaimMissedOneWinner(t *testing.T) {
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		a, _ := b.open(t)
		other, _ := b.open(t)
		lockers := map[string]*sqlLocker{"host-a": a, "host-b": other}
		for round := range 5 {
			job := fmt.Sprintf("job%d", round)
			var mu sync.Mutex
			winners := map[string]bool{}
			var losers []lock.Record
			var wg sync.WaitGroup
			start := make(chan struct{})
			for host, l := range lockers {
				wg.Go(func() {
					<-start
					won, by, err := l.ClaimMissed(t.Context(), lock.MissedClaim{Lock: "orders", Job: job,
						First: locktest.SlotAt(10), Through: locktest.SlotAt(12), RunID: "run-" + host, Host: host})
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err != nil:
						t.Errorf("%s: ClaimMissed: %v", host, err)
					case won:
						winners[host] = true
					default:
						losers = append(losers, by)
					}
				})
			}
			close(start)
			wg.Wait()
			if len(winners) != 1 || len(losers) != 1 {
				t.Fatalf("round %d: winners %v, losers %v; want one of each", round, winners, losers)
			}
			if by := losers[0]; !winners[by.Host] || by.RunID != "run-"+by.Host {
				t.Errorf("round %d: loser names %+v, want the winner %v", round, by, winners)
			}
			won, _, err := a.ClaimMissed(t.Context(), lock.MissedClaim{Lock: "orders", Job: job,
				First: locktest.SlotAt(11), Through: locktest.SlotAt(12), RunID: "late"})
			if won || err != nil {
				t.Errorf("round %d: a claim inside the claimed slots = %v, %v; want lost", round, won, err)
			}
		}
	})
}

// A cronvisor_slots made before the ledger gains its columns; its rows
// read with an empty outcome and still move the cursor.
func TestSQLLedgerOldTable(t *testing.T) {
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		first, raw := b.open(t)
		ctx := t.Context()
		if _, err := first.LastSlots(ctx, []lock.SlotKey{{Lock: "orders", Job: "sync"}}); err != nil {
			t.Fatal(err) // the tables made
		}
		for _, q := range []string{`DROP TABLE cronvisor_slots`, `CREATE TABLE cronvisor_slots (
			name VARCHAR(255) NOT NULL, job VARCHAR(255) NOT NULL, slot_ns BIGINT NOT NULL,
			run_id VARCHAR(100) NOT NULL, host VARCHAR(255) NOT NULL, since VARCHAR(40) NOT NULL,
			PRIMARY KEY (name, job, slot_ns))`} {
			if _, err := raw.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		l, _ := b.open(t)
		if _, err := raw.ExecContext(ctx, l.d.rebind(`INSERT INTO cronvisor_slots VALUES (?, ?, ?, 'old', 'host-o', '')`),
			l.prefix+"orders", "sync", locktest.SlotAt(4).UnixNano()); err != nil {
			t.Fatal(err)
		}
		_, err := l.Acquire(ctx, locktest.Request("sync", "run-1", "", locktest.SlotAt(4)))
		var done *lock.SlotDoneError
		if !errors.As(err, &done) || done.Record.RunID != "old" || done.Outcome != "" {
			t.Errorf("fire of an old row's slot: %v, want a *lock.SlotDoneError naming old", err)
		}
		g := mustSQL(t, l, locktest.Request("sync", "run-2", "", locktest.SlotAt(5)))
		if _, outcome, _, _ := ledgerRowOf(t, l, "sync", locktest.SlotAt(5)); outcome != "running" || g.fence == 0 {
			t.Errorf("new claim in an old table: outcome %q, token %d", outcome, g.fence)
		}
	})
}
