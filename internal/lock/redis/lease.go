package redis

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/lock"
)

// redisLease is a held Redis lock, kept alive by its renewal goroutine
// (the watch).
type redisLease struct {
	lock.LeaseCore
	lock.Watch
	locker *RedisLocker
	token  string
	slot   string // slotArg of a scheduled fire; "" for manual runs
	fence  int64
}

// newLease starts renewing a lock taken at boot time start.
func (l *RedisLocker) newLease(name, token, slot string, r redisRecord, start time.Duration) *redisLease {
	le := l.lease(name, token, slot)
	le.Init(name, r.Record, le)
	le.fence = r.FencingToken
	le.Start(context.Background(), func(ctx context.Context) { le.renew(ctx, start+l.ttl) })
	return le
}

// lease is a lease of l not yet renewed.
func (l *RedisLocker) lease(name, token, slot string) *redisLease {
	le := &redisLease{Watch: lock.NewWatch(), locker: l, token: token, slot: slot}
	le.Init(name, lock.Record{}, le)
	return le
}

// boottime reads CLOCK_BOOTTIME: monotonic like Go's own clock, but it
// also counts time suspended, so a lease is not trusted across a suspend
// that outlasted it.
func boottime() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) // pre-2.6.39 kernels
	}
	return time.Duration(ts.Nano())
}

// margin is how long before the lease can expire in Redis that an
// unrenewed lease is declared lost: time for the supervisor to end the run
// before another holder can start, and slack for Redis's clock running
// faster than ours.
func (l *RedisLocker) margin() time.Duration { return l.ttl / 5 }

// renew extends the lease every ttl/3. expiry is the earliest boot time at
// which Redis may drop the key: the TTL counted from before the last
// successful request was sent. A reply saying the key is gone or holds
// another token loses the lease at once; errors (Redis unreachable, a
// replica, a timeout) are retried with backoff until expiry minus the
// margin, and then the lease is lost too: past that point we might no
// longer own it, so we stop extending it.
func (le *redisLease) renew(ctx context.Context, expiry time.Duration) {
	l := le.locker
	k := l.keys(le.Name())
	every := l.ttl / 3
	wait, backoff := every, 50*time.Millisecond
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		sent := boottime()
		left := expiry - l.margin() - sent
		if left <= 0 {
			le.MarkLost()
			return
		}
		opCtx, cancel := context.WithTimeout(ctx, min(lock.OpTimeout, left))
		ok, err := renewScript.Run(opCtx, l.client, []string{k.lock, k.holder},
			le.token, ms(l.ttl), ms(l.retention)).Bool()
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && ok:
			expiry, wait, backoff = sent+l.ttl, every, 50*time.Millisecond
		case err == nil:
			le.MarkLost()
			return
		default:
			wait = max(0, min(backoff, expiry-l.margin()-boottime()))
			backoff = min(2*backoff, every)
		}
	}
}

// stopRenewal ends the renewal goroutine and waits for it. Release uses
// it; tests call it to play a holder that stalls past its TTL.
func (le *redisLease) stopRenewal() { le.Halt() }

// grant is what a Redis lease offers: Lost, the fencing token (the
// lock's acquisition count when this lease took it) and MinLifeLeft, the
// margin: renewals keep about 2/3 of the TTL left while Redis answers;
// while it does not, the lease is declared lost, and its run ended, only
// once the margin is all that is left.
func (le *redisLease) grant() lock.Grant {
	return lock.Grant{Lease: le, Lost: le.Lost(), Tethered: true, MinLifeLeft: le.locker.margin(), FencingToken: le.fence,
		Handoff: le.handoff()}
}

// store rewrites the holder record (and the slot cursor's copy), only
// while the lock still holds our token; if it does not, the lease is lost
// and the error matches ErrLeaseLost.
func (le *redisLease) StoreRecord(h lock.Record, op string) error {
	rec, err := json.Marshal(redisRecord{Record: h, FencingToken: le.fence})
	if err != nil {
		return fmt.Errorf("lock %q: encode record: %w", le.Name(), err)
	}
	l := le.locker
	k := l.keys(le.Name())
	ctx, cancel := context.WithTimeout(context.Background(), lock.OpTimeout)
	defer cancel()
	ok, err := setPIDScript.Run(ctx, l.client, []string{k.lock, k.holder, l.slotKey(le.Name(), h.Job)},
		le.token, rec, le.slot, ms(l.retention)).Bool()
	if err != nil {
		return l.wrap(context.Background(), fmt.Sprintf("lock %q: %s", le.Name(), op), err)
	}
	if !ok {
		le.MarkLost()
		return fmt.Errorf("lock %q: %s: %w", le.Name(), op, ErrLeaseLost)
	}
	return nil
}

// Release stops renewing and deletes the lock only if it still holds our
// token, so a lease that expired never deletes its successor's lock. If
// Redis cannot be reached the lock stays until its TTL runs out; the error
// then matches ErrUnavailable. Calling it again is a no-op.
func (le *redisLease) Release() error {
	if !le.BeginRelease() {
		return nil
	}
	le.stopRenewal()
	l := le.locker
	ctx, cancel := context.WithTimeout(context.Background(), lock.OpTimeout)
	defer cancel()
	if err := releaseScript.Run(ctx, l.client, []string{l.keys(le.Name()).lock}, le.token).Err(); err != nil {
		return l.wrap(context.Background(), fmt.Sprintf("release lock %q", le.Name()), err)
	}
	return nil
}

// ReleaseInFlight is Release: a Redis record does not outlive its lease,
// so it cannot say that a run is in flight.
func (le *redisLease) ReleaseInFlight() error { return le.Release() }
