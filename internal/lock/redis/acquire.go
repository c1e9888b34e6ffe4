package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"cronvisor/internal/lock"
)

// Acquire takes the lock in one atomic script: if the lock key exists it
// returns a *HeldError with the holder's record; else, with CheckSlot, if
// the job's slot cursor is at or past the slot, a *SlotDoneError; else it
// sets the lock (NX semantics, PX ttl), the holder record, the next
// fencing token and, with CheckSlot, the cursor. Being one script is what
// stops a supervisor whose timer fires a few milliseconds later from
// running the same slot again. A Redis that cannot be reached within about
// a second and a half gives an error matching ErrUnavailable.
func (l *RedisLocker) Acquire(ctx context.Context, req lock.Request) (lock.Grant, error) {
	if err := ctx.Err(); err != nil {
		return lock.Grant{}, err
	}
	if err := lock.CheckName(req.Name); err != nil {
		return lock.Grant{}, err
	}
	h := lock.NewRecord(req.Record, l.host)
	var slot string
	if req.CheckSlot {
		if h.Slot.IsZero() {
			return lock.Grant{}, fmt.Errorf("lock %q: CheckSlot needs a slot", req.Name)
		}
		if !lock.ValidName(h.Job) { // it is part of the cursor's key
			return lock.Grant{}, fmt.Errorf("lock %q: %w: job %q", req.Name, lock.ErrBadName, h.Job)
		}
		var err error
		if slot, err = slotArg(h.Slot); err != nil {
			return lock.Grant{}, fmt.Errorf("lock %q: %w", req.Name, err)
		}
	}
	rec, err := json.Marshal(h)
	if err != nil {
		return lock.Grant{}, fmt.Errorf("lock %q: encode record: %w", req.Name, err)
	}
	k, token, what := l.keys(req.Name), newToken(), fmt.Sprintf("lock %q", req.Name)
	opCtx, cancel := context.WithTimeout(ctx, lock.OpTimeout)
	defer cancel()
	start := boottime() // before sending: Redis starts the TTL later than this
	res, err := acquireScript.Run(opCtx, l.client,
		[]string{k.lock, k.holder, k.fence, l.slotKey(req.Name, h.Job)},
		token, ms(l.ttl), rec, slot, ms(l.retention)).StringSlice()
	if err != nil {
		if !neverSent(err) {
			l.goAbandon(k.lock, token)
		}
		return lock.Grant{}, l.wrap(ctx, what, err)
	}
	if len(res) != 2 {
		return lock.Grant{}, fmt.Errorf("%s: unexpected reply %q from redis", what, res)
	}
	switch res[0] {
	case "held":
		return lock.Grant{}, &lock.HeldError{Lock: req.Name, Record: foreignOr(res[1])}
	case "done":
		r, _ := parseRedisRecord(res[1])
		return lock.Grant{}, &lock.SlotDoneError{Lock: req.Name, Record: r.Record}
	case "ok":
		if r, ok := parseRedisRecord(res[1]); ok {
			return l.newLease(req.Name, token, slot, r, start).grant(), nil
		}
	}
	l.goAbandon(k.lock, token)
	return lock.Grant{}, fmt.Errorf("%s: unexpected reply %q from redis", what, res)
}

// goAbandon runs abandon beside the failed Acquire's return, owned by
// the locker: Close waits for it. After Close it does nothing, the client
// being closed.
func (l *RedisLocker) goAbandon(lockKey, token string) {
	l.abandonMu.Lock()
	defer l.abandonMu.Unlock()
	if l.closed {
		return
	}
	l.abandons.Go(func() { l.abandon(lockKey, token) })
}

// abandon frees a lock that a failed Acquire may have taken all the same
// (the script ran but its reply was lost), rather than leave it blocking
// others for a TTL. Best effort: it is ours only if it holds our token.
func (l *RedisLocker) abandon(lockKey, token string) {
	ctx, cancel := context.WithTimeout(context.Background(), lock.OpTimeout)
	defer cancel()
	_ = releaseScript.Run(ctx, l.client, []string{lockKey}, token).Err()
}

// neverSent reports errors after which the script cannot have run: there
// was no connection to send it on. (Should an earlier attempt, retried by
// go-redis, have reached Redis after all, the lock lingers for one TTL.)
func neverSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// ms renders a duration as whole milliseconds for PX and PEXPIRE.
func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// Inspect reports one lock: held while its key exists, with the holder's
// record; for a free lock, the last record if it has not expired.
func (l *RedisLocker) Inspect(ctx context.Context, name string) (lock.Status, error) {
	if err := ctx.Err(); err != nil {
		return lock.Status{}, err
	}
	if err := lock.CheckName(name); err != nil {
		return lock.Status{}, err
	}
	k := l.keys(name)
	opCtx, cancel := context.WithTimeout(ctx, lock.OpTimeout)
	defer cancel()
	res, err := inspectScript.Run(opCtx, l.client, []string{k.lock, k.holder}).StringSlice()
	if err != nil {
		return lock.Status{}, l.wrap(ctx, fmt.Sprintf("lock %q", name), err)
	}
	if len(res) != 2 {
		return lock.Status{}, fmt.Errorf("lock %q: unexpected reply %q from redis", name, res)
	}
	st := lock.Status{Name: name, Held: res[0] == "held"}
	if st.Held {
		st.Record = foreignOr(res[1])
	} else if r, ok := parseRedisRecord(res[1]); ok {
		st.Record = r.Record
	}
	return st, nil
}

// List reports every lock that is held or has a record, sorted by name. It
// scans the keyspace (SCAN, never KEYS, so Redis is not blocked); a lock
// that cannot be inspected is left out and named in the returned error.
func (l *RedisLocker) List(ctx context.Context) ([]lock.Status, error) {
	seen := map[string]bool{}
	for _, kind := range []string{"lock:", "holder:"} {
		base := l.prefix + kind
		iter := l.client.Scan(ctx, 0, globEscape(base)+"*", 100).Iterator()
		for iter.Next(ctx) {
			if name := strings.TrimPrefix(iter.Val(), base); lock.ValidName(name) {
				seen[name] = true
			}
		}
		if err := iter.Err(); err != nil {
			return nil, l.wrap(ctx, "list locks", err)
		}
	}
	names := make([]string, 0, len(seen))
	for name := range seen {
		names = append(names, name)
	}
	slices.Sort(names)
	return lock.InspectAll(ctx, names, l.Inspect)
}

// globEscape quotes SCAN MATCH's special characters in a key prefix.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
