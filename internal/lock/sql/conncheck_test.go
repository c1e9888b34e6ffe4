package sql

import (
	"sync"
	"testing"
	"time"

	"cronvisor/internal/harness/locktest"
)

// A lease's pinned connection is used by its keep-alive and by the
// record's rewrites (a run's pid at its start) at once: before the two
// were serialised, MySQL's driver broke the connection (the lease lost)
// and pgx panicked. The writers keep the connection busy for several
// checks, so each check is sent while writes wait or are in flight. A
// check is allowed as long as its period to answer, so the period is
// kept well above a loaded host's round trip: a check that times out
// is a loss by design (and MySQL's driver closes the connection on it),
// which is not what this test is about.
func TestSQLLeaseCheckedWhileItsRecordIsWritten(t *testing.T) {
	const every = 200 * time.Millisecond
	eachSQL(t, func(t *testing.T, b sqlBackend) {
		l, _ := b.open(t, WithKeepAlive(every))
		lease := mustSQL(t, l, locktest.Request("sync", "run-1", "", locktest.SlotAt(1)))
		h := lease.Record()
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		until := time.Now().Add(6 * every)
		for w := range 4 {
			wg.Go(func() {
				h := h
				h.PID = 1000 + w
				for time.Now().Before(until) {
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
