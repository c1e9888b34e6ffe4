package sql

import (
	"sync"
	"testing"
	"time"

	"cronvisor/internal/harness/locktest"
)

// A lease's pinned connection is used by its keep-alive (here every 10
// ms) and by the record's rewrites (a run's pid at its start) at once:
// before the two were serialised, MySQL's driver broke the connection
// (the lease lost) and pgx panicked.
func TestSQLLeaseCheckedWhileItsRecordIsWritten(t *testing.T) {
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		l, _ := b.open(t, WithKeepAlive(10*time.Millisecond))
		lease := mustSQL(t, l, locktest.Request("sync", "run-1", "", locktest.SlotAt(1)))
		h := lease.Record()
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for w := range 4 {
			wg.Go(func() {
				h := h
				h.PID = 1000 + w
				for range 300 {
					if err := lease.StoreRecord(h, "set run"); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("StoreRecord: %v", err)
		}
		select {
		case <-lease.Lost():
			t.Fatal("the lease was lost while nothing happened to its session")
		default:
		}
	})
}
