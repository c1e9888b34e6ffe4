package sql

import (
	"testing"

	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
)

// TestSQLSetRunRenamesTheHolder: a retry keeps the lock and renames its
// record, which another host then reads.
func TestSQLSetRunRenamesTheHolder(t *testing.T) {
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		a, _ := b.open(t)
		other, _ := b.open(t)
		lease := mustSQL(t, a, sqlReq("sync", "run-1", "host-a", slotAt(1)))
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

func TestFileSetRunRenamesTheHolder(t *testing.T) {
	l := lock.NewFileLocker(t.TempDir(), inRun)
	lease, err := l.Acquire(t.Context(), lock.Request{Name: "orders", Record: lock.Record{Holder: run.Holder{Job: "sync", RunID: "run-1", PID: 1}, SupervisorPID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	if err := lease.SetRun("run-1b", 4343); err != nil {
		t.Fatalf("SetRun: %v", err)
	}
	st, err := l.Inspect(t.Context(), "orders")
	if err != nil || st.Record.RunID != "run-1b" || st.Record.PID != 4343 {
		t.Errorf("Inspect = %+v, %v; want run-1b pid 4343 in the record", st, err)
	}
}
