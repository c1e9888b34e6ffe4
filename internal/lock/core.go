package lock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sync"
	"time"

	"cronvisor/internal/base/procfs"
)

// nameRE is the job-name alphabet; it keeps lock names plain file names.
// (A compiled regexp, read-only after init.)
var nameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// checkLockName refuses a name that is not a plain file name (nameRE).
func checkLockName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%w %q: use letters, digits, '_', '.' and '-'", ErrBadName, name)
	}
	return nil
}

// localHost is the machine's name for records, "localhost" when it has
// none.
func localHost() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		return "localhost"
	}
	return host
}

// newRecord is the record a request writes, the same for every backend:
// the caller's fields with Request.Record's defaults (host, since, pids),
// and none of what a backend keeps beside them (Slots, InFlight, RetryAt)
// or only Inspect sets (Foreign, Cmdline). A backend that keeps those
// sets them after.
func newRecord(req Record, host string) Record {
	h := Record{Holder: req.Holder, Slot: req.Slot, SupervisorPID: req.SupervisorPID}
	h.Foreign, h.Cmdline = false, ""
	if h.Host == "" {
		h.Host = host
	}
	if h.Since.IsZero() {
		h.Since = time.Now()
	}
	if h.SupervisorPID == 0 {
		h.SupervisorPID = procfs.Self()
	}
	if h.PID == 0 {
		h.PID = h.SupervisorPID
	}
	return h
}

// RecordStore is a backend's write of its lease's record.
type RecordStore interface {
	// StoreRecord makes h the lock's record; op names the change for
	// errors. The lease's core calls it with its mutex held.
	StoreRecord(h Record, op string) error
}

// leaseCore is what every backend's lease shares: the lock's name, the
// record as last written and whether the lease was released. Its
// rewrites go through its backend. Record, SetPID and SetRun implement
// Lease.
type leaseCore struct {
	name    string
	backend RecordStore

	mu       sync.Mutex
	holder   Record
	released bool
}

// Record returns the record as last written.
func (c *leaseCore) Record() Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.holder.clone()
}

// SetPID rewrites the record with the run's process id once started.
func (c *leaseCore) SetPID(pid int) error {
	return c.rewrite("set pid", func(h *Record) { h.PID = pid })
}

// SetRun rewrites the record for a retry of the same slot, which kept
// the lock: its run id and, started, its pid. The slot no longer waits
// for a retry (RetryAt).
func (c *leaseCore) SetRun(runID string, pid int) error {
	return c.rewrite("set run", func(h *Record) { h.RunID, h.PID, h.RetryAt = runID, pid, time.Time{} })
}

// rewrite stores the record changed by change, unless released. The
// record is kept only once stored.
func (c *leaseCore) rewrite(op string, change func(*Record)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released {
		return ErrReleased
	}
	h := c.holder
	change(&h)
	if err := c.backend.StoreRecord(h, op); err != nil {
		return err
	}
	c.holder = h
	return nil
}

// beginRelease marks the lease released; false when it already was, and
// Release has nothing left to do.
func (c *leaseCore) beginRelease() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.MarkReleasedLocked()
}

// watch is the goroutine that a lease nothing of the run holds (Redis,
// SQL) keeps checking its lock with, and the loss it reports.
type watch struct {
	lost     chan struct{} // Grant.Lost
	lostOnce sync.Once
	stop     context.CancelFunc // ends the goroutine
	done     chan struct{}      // closed when it has ended
}

func newWatch() watch { return watch{lost: make(chan struct{}), done: make(chan struct{})} }

// start runs check until the watch is halted or parent ends; check
// returns when its context ends, or after markLost.
func (w *watch) start(parent context.Context, check func(ctx context.Context)) {
	ctx, stop := context.WithCancel(parent)
	w.stop = stop
	go func() {
		defer close(w.done)
		check(ctx)
	}()
}

func (w *watch) markLost() { w.lostOnce.Do(func() { close(w.lost) }) }

// started reports whether start was called.
func (w *watch) started() bool { return w.stop != nil }

// halt ends the goroutine and waits for it; a watch never started has
// none.
func (w *watch) halt() {
	if !w.started() {
		return
	}
	w.stop()
	<-w.done
}

// ownLeases are a locker's unreleased leases by lock name. A fire of a
// job whose lease this process holds is refused from here, before the
// backend is asked.
type ownLeases[L comparable] struct {
	mu sync.Mutex
	m  map[string]L
}

func newOwnLeases[L comparable]() ownLeases[L] { return ownLeases[L]{m: map[string]L{}} }

// get is the lease held on name, the zero L if none.
func (o *ownLeases[L]) get(name string) L {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.m[name]
}

func (o *ownLeases[L]) add(name string, le L) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.m[name] = le
}

// all is every lease held, in no order.
func (o *ownLeases[L]) all() []L {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]L, 0, len(o.m))
	for _, le := range o.m {
		out = append(out, le)
	}
	return out
}

// forget drops le once released, unless another lease took its place.
func (o *ownLeases[L]) forget(name string, le L) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m[name] == le {
		delete(o.m, name)
	}
}

// inspectAll inspects each of names, for a backend's List: a lock that
// cannot be inspected is skipped and its error joined to the others, and
// a done context ends the walk with what was found so far.
func inspectAll(ctx context.Context, names []string, inspect func(context.Context, string) (Status, error)) ([]Status, error) {
	var out []Status
	var errs []error
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		st, err := inspect(ctx, name)
		if err != nil {
			if ctx.Err() != nil {
				return out, err
			}
			errs = append(errs, err)
			continue
		}
		out = append(out, st)
	}
	return out, errors.Join(errs...)
}
