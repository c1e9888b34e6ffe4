package sql

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"cronvisor/internal/lock"
)

// sqlLease is a held SQL lock: a session lock on its pinned connection,
// checked by a keep-alive on that connection (the watch).
type sqlLease struct {
	lock.LeaseCore
	lock.Watch
	locker *sqlLocker
	// c is the pinned connection; connMu lets one statement at a time
	// use it (see onConn).
	c      *sql.Conn
	connMu sync.Mutex
	full   string // prefix + name: the record's key
	key    string // what the server locks
	conn   int64  // the session's id
	sess   sessionID
	fence  int64
	// claimed says the acquisition claimed its slot (CheckSlot): its row
	// in cronvisor_slots takes the run's outcome (SetOutcome).
	claimed bool
	// session is a duplicate of the connection's socket for the run's
	// processes and keeper (Grant.Session), nil if not found; closed at
	// Release.
	session *os.File
	// silent says the lease was lost to a connection that stopped
	// answering, not to the server's word: its session may live on on
	// the server, which Release hands to the locker to end (endStale).
	silent atomic.Bool
}

func timeFromNS(ns int64) time.Time { return time.Unix(0, ns) }

func (l *sqlLocker) newLease(c *sql.Conn, name, full, key string, h lock.Record, sess sessionID, fence int64) *sqlLease {
	le := &sqlLease{Watch: lock.NewWatch(), locker: l, c: c,
		full: full, key: key, conn: sess.ID, sess: sess, fence: fence}
	le.Init(name, h, le)
	le.Start(context.Background(), le.keepAlive)
	return le
}

// keepAlive asks the pinned connection every KeepAlive whether its
// session still holds the lock, allowing each answer KeepAlive. No answer
// in time, a broken connection or a "no" is lease loss: the server frees
// a session lock the moment the session ends, so a connection we cannot
// vouch for is a lock another holder may already have. The loss is thus
// seen within 2×KeepAlive of the lock's loss.
func (le *sqlLease) keepAlive(ctx context.Context) {
	every := le.locker.keepAlive
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var held bool
		err := le.onConn(func(c *sql.Conn) (err error) {
			qctx, cancel := context.WithTimeout(ctx, every)
			defer cancel()
			held, err = le.locker.d.stillHeld(qctx, c, le.key)
			return err
		})
		switch {
		case ctx.Err() != nil:
			return
		case err != nil || !held:
			if err != nil {
				le.silent.Store(true)
			}
			le.MarkLost()
			return
		}
	}
}

// grant is what a session lock offers: Lost, the fencing token (the
// lock's acquisition count when this lease took it), and Tethered with a
// MinLifeLeft of 0: the server frees the lock the instant the session
// ends, so when this supervisor dies (taking its connection along) the
// run's guard must end the run at once, and a lost lease was already
// someone else's to take.
func (le *sqlLease) grant() lock.Grant {
	return lock.Grant{Lease: le, Lost: le.Lost(), Tethered: true, FencingToken: le.fence, Session: le.session}
}

// store rewrites the record's pid and run id on the lock's own
// connection, only while its session still is the one that wrote it; a
// connection that fails loses the lease.
func (le *sqlLease) StoreRecord(h lock.Record, op string) error {
	l := le.locker
	err := le.onConn(func(c *sql.Conn) error {
		ctx, cancel := context.WithTimeout(context.Background(), lock.OpTimeout)
		defer cancel()
		_, err := c.ExecContext(ctx, l.d.rebind(`UPDATE cronvisor_locks SET pid = ?, run_id = ? WHERE name = ? AND conn_id = ?`),
			h.PID, h.RunID, le.full, le.conn)
		return err
	})
	if err != nil {
		le.silent.Store(true)
		le.MarkLost()
		return l.wrap(context.Background(), fmt.Sprintf("lock %q: %s", le.Name(), op), err)
	}
	return nil
}

// Release stops the keep-alive, gives the lock up on its connection and
// closes that connection; closing alone would free the lock too, so an
// error of the unlock is only reported. Calling it again is a no-op.
func (le *sqlLease) Release() error {
	if !le.BeginRelease() {
		return nil
	}
	defer le.locker.held.Forget(le.Name(), le) // after the unlock: a fire meanwhile is refused, not run
	le.Halt()
	if le.session != nil {
		defer le.session.Close() // after the unlock and the close: the session ends with the last descriptor
	}
	le.connMu.Lock() // held to the end: the connection is discarded below
	defer le.connMu.Unlock()
	select {
	case <-le.Lost(): // the session is gone or no longer holds it, or cannot be told
		discard(le.c)
		if le.silent.Load() {
			// Now that the run is over: a server that still keeps
			// the session frees the lock only when it is ended.
			le.locker.endStale(staleSession{sessionID: le.sess, key: le.key})
		}
		return nil
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), lock.OpTimeout)
	defer cancel()
	err := le.locker.d.unlock(ctx, le.c, le.key)
	discard(le.c)
	if err != nil {
		return le.locker.wrap(context.Background(), fmt.Sprintf("release lock %q", le.Name()), err)
	}
	return nil
}

// onConn runs f on the pinned connection, one caller at a time. Neither
// database/sql's Conn nor the drivers serialise a connection's
// statements: a keep-alive's query sent while a record's write is in
// flight breaks the connection (MySQL's driver: "bad connection", the
// lease then lost) or panics (pgx).
func (le *sqlLease) onConn(f func(c *sql.Conn) error) error {
	le.connMu.Lock()
	defer le.connMu.Unlock()
	return f(le.c)
}

// ReleaseInFlight is Release: the record says who holds the lock only
// while its session does, so it cannot say that a run is in flight.
func (le *sqlLease) ReleaseInFlight() error { return le.Release() }
