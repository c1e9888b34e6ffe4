package lock

import (
	"context"
	"time"
)

// What a backend in a folder of its own (lock/file, lock/redis, …)
// takes from the lease core: the core and the watch to embed, and the
// helpers every backend's Acquire shares. Inside package lock the
// unexported names serve.

// LeaseCore is the lease core a backend's lease embeds (Record, SetPID,
// SetRun); Init it before the lease is shared.
type LeaseCore = leaseCore

// Init sets the lock's name, the record as taken, and the backend that
// stores the record's rewrites (the lease itself).
func (c *leaseCore) Init(name string, h Record, store RecordStore) {
	c.name, c.holder, c.backend = name, h, store
}

// Name is the lock's name.
func (c *leaseCore) Name() string { return c.name }

// BeginRelease marks the lease released; false when it already was, and
// Release has nothing left to do.
func (c *leaseCore) BeginRelease() bool { return c.beginRelease() }

// Lock takes the core's mutex, for a lease that guards state of its own
// with it (the file backend's descriptors, which its StoreRecord, called
// with the mutex held, writes through) or holds it across a whole
// Release.
func (c *leaseCore) Lock() { c.mu.Lock() }

// Unlock drops the core's mutex (see Lock).
func (c *leaseCore) Unlock() { c.mu.Unlock() }

// HolderLocked is the record as last written, to be called with the
// mutex held. It is not a copy: its Slots map must not be changed.
func (c *leaseCore) HolderLocked() Record { return c.holder }

// ReleasedLocked reports whether the lease was released, to be called
// with the mutex held.
func (c *leaseCore) ReleasedLocked() bool { return c.released }

// MarkReleasedLocked marks the lease released, to be called with the
// mutex held; false when it already was.
func (c *leaseCore) MarkReleasedLocked() bool {
	if c.released {
		return false
	}
	c.released = true
	return true
}

// Rewrite stores the record changed by change, unless released (see
// rewrite); op names the change for errors.
func (c *leaseCore) Rewrite(op string, change func(*Record)) error { return c.rewrite(op, change) }

// Clone copies h with its own Slots map.
func (h Record) Clone() Record { return h.clone() }

// Watch is the goroutine a lease nothing of the run holds keeps checking
// its lock with (see watch); make it with NewWatch.
type Watch = watch

// NewWatch returns a watch not started.
func NewWatch() Watch { return newWatch() }

// Start runs check until the watch is halted or parent ends.
func (w *watch) Start(parent context.Context, check func(ctx context.Context)) {
	w.start(parent, check)
}

// MarkLost closes Lost once.
func (w *watch) MarkLost() { w.markLost() }

// Started reports whether Start was called.
func (w *watch) Started() bool { return w.started() }

// Halt ends the goroutine and waits for it.
func (w *watch) Halt() { w.halt() }

// Lost is closed when the lease is lost (Grant.Lost).
func (w *watch) Lost() chan struct{} { return w.lost }

// LocalHost is the machine's name for records.
func LocalHost() string { return localHost() }

// NewRecord is the record a request writes (see newRecord).
func NewRecord(req Record, host string) Record { return newRecord(req, host) }

// CheckName refuses a lock name that is not a plain file name.
func CheckName(name string) error { return checkLockName(name) }

// ValidName reports whether s is a valid lock (and job) name.
func ValidName(s string) bool { return nameRE.MatchString(s) }

// InspectAll inspects each of names, as List does.
func InspectAll(ctx context.Context, names []string, inspect func(context.Context, string) (Status, error)) ([]Status, error) {
	return inspectAll(ctx, names, inspect)
}

// OpTimeout bounds one request of a network backend.
const OpTimeout = opTimeout

// opTimeout bounds one operation of a network backend, its driver's own
// retries included: an unreachable server must skip a fire quickly, not
// stall the scheduler.
const opTimeout = 1500 * time.Millisecond

// DefaultRetention is how long slot cursors and holder records outlive
// their last write. A cursor only has to outlast the window in which
// another supervisor may still fire or catch up the same slot (timer
// skew, catch_up); a week covers any sane catch_up while letting the
// keys of removed jobs go. The fencing counter never expires: tokens
// must keep increasing.
const DefaultRetention = 7 * 24 * time.Hour

// OwnLeases are a locker's unreleased leases by lock name (see
// ownLeases); make it with NewOwnLeases.
type OwnLeases[L comparable] = ownLeases[L]

// NewOwnLeases returns an empty set.
func NewOwnLeases[L comparable]() OwnLeases[L] { return newOwnLeases[L]() }

// Get is the lease held on name, the zero L if none.
func (o *ownLeases[L]) Get(name string) L { return o.get(name) }

// Add records le as held on name.
func (o *ownLeases[L]) Add(name string, le L) { o.add(name, le) }

// All is every lease held, in no order.
func (o *ownLeases[L]) All() []L { return o.all() }

// Forget drops le once released, unless another lease took its place.
func (o *ownLeases[L]) Forget(name string, le L) { o.forget(name, le) }
