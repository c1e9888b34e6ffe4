package lock

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"cronvisor/internal/base/run"
)

// Backend is one lock backend as the rest of cronvisor sees it: its
// kind (lock_backend.type), the checks of its settings that config.Load
// makes, how to open it, and how a keeper takes over one of its leases.
// Each backend exports one; package lock/backends lists them all, and
// nothing outside that list dispatches on a kind.
type Backend struct {
	Name string // lock_backend.type
	// Address is the key of its address, "url" or "dsn" ("": it takes
	// none); Hint shows its form in the message that refuses the other.
	Address, Hint string
	// Check says what the address should look like and, when it is not
	// that, why (nil: it is), parsed as Open will parse it.
	Check func(addr string) (want string, why error)
	// TTL checks lock_backend.ttl; nil: the backend takes none.
	TTL func(time.Duration) error
	// Prefix checks lock_backend.prefix beyond the common form; nil: the
	// backend takes none.
	Prefix func(string) error
	// Open returns the backend's Locker on s.
	Open func(s Settings) (Locker, error)
	// Keep takes over a lease from its Grant.Handoff (the keeper of a dead
	// supervisor's run); nil: its grants carry no hand-off.
	Keep func(handoff []byte) (KeptLease, error)
}

// InRun tells whether process pid belongs to run runID (it carries the
// run's tag in its environment, say). The locker's caller knows how a run
// marks its processes; the locker only asks, to tell a survivor of a
// run that still holds the lock from a program outside cronvisor.
type InRun func(pid int, runID string) bool

// Settings are what Open takes: lock_backend's values, and the file
// backend's place and rules.
type Settings struct {
	URL    string        // the url or dsn, ${VAR} expanded
	TTL    time.Duration // the lease's, for a backend with TTL
	Prefix string        // the name prefix; "" for the backend's default

	LocksDir   string // STATE_DIR/locks
	CursorsDir string // STATE_DIR/cursors: the file backend's cursor journals
	InRun      InRun
	Durability run.Durability
}

// The methods below are what config.LockKind asks: config cannot import
// lock, so it takes the backends through that interface.

// Kind is the backend's lock_backend.type.
func (b Backend) Kind() string { return b.Name }

// AddressKey is the key of its address ("" for none) and its form.
func (b Backend) AddressKey() (key, hint string) { return b.Address, b.Hint }

// CheckAddress checks an address as Open will parse it.
func (b Backend) CheckAddress(s string) (want string, why error) {
	if b.Check == nil {
		return "", nil
	}
	return b.Check(s)
}

// CheckTTL checks a ttl; used is false for a backend that takes none.
func (b Backend) CheckTTL(d time.Duration) (used bool, err error) {
	if b.TTL == nil {
		return false, nil
	}
	return true, b.TTL(d)
}

// CheckPrefix checks a prefix; used is false for a backend that takes none.
func (b Backend) CheckPrefix(p string) (used bool, err error) {
	if b.Prefix == nil {
		return false, nil
	}
	return true, b.Prefix(p)
}

// KeptLease is a lease that a run's keeper holds once the supervisor that
// took it died.
type KeptLease interface {
	// Keep renews it until ctx ends; the channel is closed if it is lost
	// (its run must then be gone within Within).
	Keep(ctx context.Context) <-chan struct{}
	// Within is how long a lost lease leaves for its run to end.
	Within() time.Duration
	// Release gives it up, only if it is still ours.
	Release() error
}

// PartialLister is implemented by lockers whose List sees only locks with
// a record (the SQL backends: a foreign session may hold a name cronvisor
// never took); a caller that knows lock names Inspects the others.
type PartialLister interface {
	Locker
	// ListIsPartial reports whether List may miss held locks.
	ListIsPartial() bool
}

// ClockSkewer is a Locker whose server can tell how far this host's
// clock is off its own (Redis's TIME), for the daemon's warning.
type ClockSkewer interface {
	ClockSkew(ctx context.Context) (time.Duration, error)
}

// Replayer is a Locker whose records may lag behind a journal after a
// machine crash (the file backend's cursor journals): the process that
// takes locks replays it before any record is read.
type Replayer interface {
	Replay() (rewritten int, err error)
}

// Logged is a Locker with trouble of its own to log, which it does not
// return from a call (the file backend's cursor journal falling back to
// a sync per lock file).
type Logged interface {
	LogTo(log *slog.Logger)
}

// HandoffKind is the kind of backend whose lease a Grant.Handoff
// describes ("" when it is not a hand-off), for the list to dispatch it.
func HandoffKind(handoff []byte) string {
	var h struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(handoff, &h) != nil {
		return ""
	}
	return h.Kind
}
