package sql

import (
	"testing"

	"cronvisor/internal/harness/locktest"
)

// TestSQLSetRunRenamesTheHolder: a retry keeps the lock and renames its
// record, which another host then reads.
func TestSQLSetRunRenamesTheHolder(t *testing.T) {
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		a, _ := b.open(t)
		other, _ := b.open(t)
		lease := mustSQL(t, a, locktest.Request("sync", "run-1", "host-a", locktest.SlotAt(1)))
		if err := lease.SetPID(4242); err != nil {
			t.Fatalf("SetPID: %v", err)
		}
		if err := lease.SetRun("run-1b", 4343); err != nil {
			t.Fatalf("SetRun: %v", err)
		}
		st, err := other.Inspect(t.Context(), "orders")
		if err != nil || !st.Held || st.Record.RunID != "run-1b" || st.Record.PID != 4343 {
			t.Errorf("Inspect = %+v, %v; want held by run-1b pid 4343", st, err)
		}
		if h := lease.Record(); h.RunID != "run-1b" || h.PID != 4343 {
			t.Errorf("lease.Record() = %+v", h)
		}
	})
}
