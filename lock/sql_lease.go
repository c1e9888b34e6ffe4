package lock

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sync"
	"time"
)

// sqlLease is a held SQL lock: a session lock on its pinned connection,
// checked by a keep-alive on that connection.
type sqlLease struct {
	locker *sqlLocker
	c      *sql.Conn
	name   string // the lock name
	full   string // prefix + name: the record's key
	key    string // what the server locks
	conn   int64  // the session's id
	fence  int64
	// session is a duplicate of the connection's socket for the run's
	// keeper (Grant.Session), nil if not found; closed at Release.
	session *os.File

	mu       sync.Mutex
	holder   Record
	released bool

	lost     chan struct{}
	lostOnce sync.Once
	stop     context.CancelFunc // ends the keep-alive goroutine
	done     chan struct{}      // closed when it has ended
}

func timeFromNS(ns int64) time.Time { return time.Unix(0, ns) }

func (l *sqlLocker) newLease(c *sql.Conn, name, full, key string, h Record, id, fence int64) *sqlLease {
	ctx, stop := context.WithCancel(context.Background())
	le := &sqlLease{locker: l, c: c, name: name, full: full, key: key, conn: id, fence: fence,
		holder: h, lost: make(chan struct{}), stop: stop, done: make(chan struct{})}
	go le.keepAlive(ctx)
	return le
}

// keepAlive asks the pinned connection every KeepAlive whether its
// session still holds the lock, allowing each answer KeepAlive. No answer
// in time, a broken connection or a "no" is lease loss: the server frees
// a session lock the moment the session ends, so a connection we cannot
// vouch for is a lock another holder may already have. The loss is thus
// seen within 2×KeepAlive of the lock's loss.
func (le *sqlLease) keepAlive(ctx context.Context) {
	defer close(le.done)
	every := le.locker.keepAlive
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		qctx, cancel := context.WithTimeout(ctx, every)
		held, err := le.locker.d.stillHeld(qctx, le.c, le.key)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil || !held:
			le.markLost()
			return
		}
	}
}

func (le *sqlLease) markLost() { le.lostOnce.Do(func() { close(le.lost) }) }

func (le *sqlLease) Record() Record {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.holder.clone()
}

// grant is what a session lock offers: Lost, the fencing token (the
// lock's acquisition count when this lease took it), and Tethered with a
// MinLifeLeft of 0: the server frees the lock the instant the session
// ends, so when this supervisor dies (taking its connection along) the
// run's guard must end the run at once, and a lost lease was already
// someone else's to take.
func (le *sqlLease) grant() Grant {
	return Grant{Lease: le, Lost: le.lost, Tethered: true, FencingToken: le.fence, Session: le.session}
}

// SetPID rewrites the holder record on the lock's own connection, only
// while its session still is the one that wrote it; a connection that
// fails loses the lease.
func (le *sqlLease) SetPID(pid int) error {
	return le.setHolder(le.holderRunID(), pid, "set pid")
}

// SetRun rewrites the record for a retry of the same slot, which kept
// the lock: its run id and, started, its pid.
func (le *sqlLease) SetRun(runID string, pid int) error {
	return le.setHolder(runID, pid, "set run")
}

func (le *sqlLease) holderRunID() string {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.holder.RunID
}

func (le *sqlLease) setHolder(runID string, pid int, op string) error {
	le.mu.Lock()
	defer le.mu.Unlock()
	if le.released {
		return ErrReleased
	}
	l := le.locker
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	_, err := le.c.ExecContext(ctx, l.d.rebind(`UPDATE cronvisor_locks SET pid = ?, run_id = ? WHERE name = ? AND conn_id = ?`),
		pid, runID, le.full, le.conn)
	if err != nil {
		le.markLost()
		return l.wrap(context.Background(), fmt.Sprintf("lock %q: %s", le.name, op), err)
	}
	le.holder.PID, le.holder.RunID = pid, runID
	return nil
}

// Release stops the keep-alive, gives the lock up on its connection and
// closes that connection; closing alone would free the lock too, so an
// error of the unlock is only reported. Calling it again is a no-op.
func (le *sqlLease) Release() error {
	le.mu.Lock()
	if le.released {
		le.mu.Unlock()
		return nil
	}
	le.released = true
	le.mu.Unlock()
	defer le.locker.forget(le) // after the unlock: a fire meanwhile is refused, not run
	le.stop()
	<-le.done
	if le.session != nil {
		defer le.session.Close() // after the unlock and the close: the session ends with the last descriptor
	}
	select {
	case <-le.lost: // the session is gone or no longer holds it
		discard(le.c)
		return nil
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	err := le.locker.d.unlock(ctx, le.c, le.key)
	discard(le.c)
	if err != nil {
		return le.locker.wrap(context.Background(), fmt.Sprintf("release lock %q", le.name), err)
	}
	return nil
}

// ReleaseInFlight is Release: the record says who holds the lock only
// while its session does, so it cannot say that a run is in flight.
func (le *sqlLease) ReleaseInFlight() error { return le.Release() }
