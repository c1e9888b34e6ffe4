package sql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
)

// Acquire takes the lock on a connection of its own, pinned to the lease
// until Release: the server's session lock belongs to that connection. If
// another session holds it, a *HeldError names the holder. Otherwise, in
// one transaction on the same connection while holding the lock: with
// CheckSlot, a job whose cursor is at or past the slot gets a
// *SlotDoneError, else the slot is claimed by inserting its row (a unique
// key: a second claim of the same slot fails even if two holders somehow
// met); the holder record is written and the fencing token bumped. A
// server that cannot be reached within about a second and a half gives an
// error matching ErrUnavailable.
func (l *sqlLocker) Acquire(ctx context.Context, req lock.Request) (lock.Grant, error) {
	if err := ctx.Err(); err != nil {
		return lock.Grant{}, err
	}
	h := lock.NewRecord(req.Record, l.host)
	if err := checkSQLRequest(req, h); err != nil {
		return lock.Grant{}, err
	}
	if own := l.held.Get(req.Name); own != nil {
		return lock.Grant{}, &lock.HeldError{Lock: req.Name, Record: own.Record()}
	}
	if err := l.ensureSchema(ctx); err != nil {
		return lock.Grant{}, err
	}
	full := l.prefix + req.Name
	key := l.serverKey(full)
	c, err := l.conn(ctx)
	if err != nil {
		return lock.Grant{}, l.wrap(ctx, fmt.Sprintf("lock %q", req.Name), err)
	}
	if err := l.take(ctx, c, req.Name, full, key); err != nil {
		return lock.Grant{}, err
	}
	// Bounded anew: take may have waited for a holder's record.
	opCtx, cancel := l.opCtx(ctx)
	defer cancel()
	le, err := l.claim(opCtx, c, req, full, key, h)
	if err != nil {
		return lock.Grant{}, l.unclaimed(ctx, opCtx, c, req.Name, key, err)
	}
	return le.grant(), nil
}

// checkSQLRequest refuses names the tables and keys cannot carry, and a
// slot check without a slot.
func checkSQLRequest(req lock.Request, h lock.Record) error {
	if err := checkName(req.Name); err != nil {
		return err
	}
	if !req.CheckSlot {
		return nil
	}
	if h.Slot.IsZero() || h.Slot.UnixNano() <= 0 {
		return fmt.Errorf("lock %q: CheckSlot needs a slot after 1970", req.Name)
	}
	if err := checkName(h.Job); err != nil {
		return fmt.Errorf("lock %q: job: %w", req.Name, err)
	}
	return nil
}

// conn is a connection of the pool, within one operation's bound.
func (l *sqlLocker) conn(ctx context.Context) (*sql.Conn, error) {
	opCtx, cancel := l.opCtx(ctx)
	defer cancel()
	return l.db.Conn(opCtx)
}

// take takes the session lock of key on c without waiting. A lock that
// another session holds gives a *HeldError naming it, and c, which then
// holds nothing, goes back to the pool; any other failure discards c.
// Errors are wrapped for ctx, the caller's context. Each try is bounded
// as one operation; the look at a holder, which may wait for its record
// (heldBy), by claimWait more.
func (l *sqlLocker) take(ctx context.Context, c *sql.Conn, name, full, key string) error {
	what := fmt.Sprintf("lock %q", name)
	// A holder that lets go between our try and our look at it (a
	// session being terminated, a peer's fire that found its slot run or
	// its resource full and let go) is tried again: peers firing the
	// same slot can hand the lock round a few times before one runs.
	for attempt := 0; ; attempt++ {
		tryCtx, cancel := l.opCtx(ctx)
		ok, err := l.d.tryLock(tryCtx, c, key)
		cancel()
		if err != nil {
			discard(c)
			return l.wrap(ctx, what, err)
		}
		if ok {
			return nil
		}
		lookCtx, cancel := context.WithTimeout(ctx, claimWait+lock.OpTimeout)
		holder, held, err := l.heldBy(lookCtx, c, full, key)
		cancel()
		if err == nil && !held && attempt < lookAgain {
			continue
		}
		defer c.Close() // it holds nothing: back to the pool
		if err != nil {
			return l.wrap(ctx, what, err)
		}
		if !held {
			holder = lock.Record{Holder: run.Holder{Foreign: true, Cmdline: "a session that let go while being looked at"}}
		}
		return &lock.HeldError{Lock: name, Record: holder}
	}
}

// lookAgain is how many more times take tries a lock whose holder let
// go while looked at, before it names no one.
const lookAgain = 5

// claimWait bounds how long a fire that found its lock held waits for
// the holder's own record; it looks after claimPoll, then twice as long
// each time up to claimPollMax, so that the peers of a server slowed down
// do not slow it down more with their looks (and delay the keep-alives
// of every lease on it).
const (
	claimWait    = 2 * time.Second
	claimPoll    = 20 * time.Millisecond
	claimPollMax = 250 * time.Millisecond
)

// heldBy names the holder of a lock, false when it is free. A holder
// writes its record a few statements after it took the lock, in a
// transaction that commits only then: a peer firing at the same slot
// looks in between and reads the previous holder's record, whose session
// is not the holder's, and would call a cronvisor peer "outside
// cronvisor". So while the record is another session's and the holder
// may be a cronvisor writing its own (mayBeClaiming), it is read again
// (after claimPoll, backing off), for up to claimWait; then the holder is
// foreign.
func (l *sqlLocker) heldBy(ctx context.Context, q querier, full, key string) (lock.Record, bool, error) {
	deadline := time.Now().Add(claimWait)
	waited, poll := false, claimPoll
	for {
		id, held, err := l.d.owner(ctx, q, key)
		if err != nil || !held {
			return lock.Record{}, false, err
		}
		r, ok, err := l.readRecord(ctx, q, full)
		switch {
		case err != nil:
			return lock.Record{}, false, err
		case ok && r.Conn == id:
			return r.H, true, nil
		case time.Now().After(deadline) || (!waited && !l.d.mayBeClaiming(ctx, q, id)):
			return l.stillHolding(ctx, q, full, key, id)
		}
		waited = true
		select {
		case <-ctx.Done():
			return lock.Record{}, false, ctx.Err()
		case <-time.After(poll):
			poll = min(2*poll, claimPollMax)
		}
	}
}

// stillHolding names session id, the holder of key heldBy gave up
// waiting for: a foreign holder only if it still holds key once named.
// A holder that let go meanwhile (a peer's claim that failed after a
// wait, its session ended) is not named: take tries the lock again.
func (l *sqlLocker) stillHolding(ctx context.Context, q querier, full, key string, id int64) (lock.Record, bool, error) {
	h, err := l.holderOf(ctx, q, full, id)
	if err != nil || !h.Foreign {
		return h, err == nil, err
	}
	now, held, err := l.d.owner(ctx, q, key)
	if err != nil || !held || now != id {
		return lock.Record{}, false, err
	}
	return h, true, nil
}

// unclaimed gives up a lock taken on c whose claim failed with err, and
// returns Acquire's error.
func (l *sqlLocker) unclaimed(ctx, opCtx context.Context, c *sql.Conn, name, key string, err error) error {
	var done *lock.SlotDoneError
	if !errors.As(err, &done) {
		discard(c) // closing the session frees the lock, whatever state it is in
		return l.wrap(ctx, fmt.Sprintf("lock %q", name), err)
	}
	// Unlocked now rather than by the session's end, which the server
	// completes a moment after the client has gone: the next fire of a
	// job sharing the lock must find it free.
	if l.d.unlock(opCtx, c, key) == nil {
		c.Close()
	} else {
		discard(c)
	}
	return err
}

// claim runs the transaction of a taken lock (see Acquire) and starts the
// lease.
func (l *sqlLocker) claim(ctx context.Context, c *sql.Conn, req lock.Request, full, key string, h lock.Record) (*sqlLease, error) {
	sess, err := l.d.session(ctx, c)
	if err != nil {
		return nil, err
	}
	id := sess.ID
	// A pooler that hands each statement to any server session (PgBouncer
	// in transaction mode) makes session locks meaningless: the statement
	// after GET_LOCK may not run on the session that holds it.
	if held, err := l.d.stillHeld(ctx, c, key); err != nil {
		return nil, err
	} else if !held {
		return nil, ErrSessionMoved
	}
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	fence, err := l.writeClaim(ctx, tx, req, full, h, id)
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	le := l.newLease(c, req.Name, full, key, h, sess, fence)
	le.session = l.d.socket(c, sess)
	le.claimed = req.CheckSlot
	l.held.Add(req.Name, le)
	return le, nil
}

// discard closes c's session rather than return it to the pool: a
// connection that held a lock, or whose state is unknown, must never be
// handed to another caller still holding it.
func discard(c *sql.Conn) {
	_ = c.Raw(func(any) error { return driver.ErrBadConn })
	_ = c.Close()
}
