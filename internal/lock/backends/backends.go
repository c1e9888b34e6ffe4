// Package backends is the one list of the lock backends. The daemon opens
// its locker, a keeper takes over a lease, and config.Load checks
// lock_backend's settings through it, so adding a backend is its folder,
// one line here, and its docs (docs/locking.md).
package backends

import (
	"fmt"

	"cronvisor/internal/lock"
	"cronvisor/internal/lock/file"
	"cronvisor/internal/lock/redis"
	"cronvisor/internal/lock/sql"
)

// All are the lock backends, in the order messages list them; the first
// is the default.
var All = []lock.Backend{file.Backend, redis.Redis, sql.MySQL, sql.Postgres}

// Find returns the backend of kind.
func Find(kind string) (lock.Backend, bool) {
	for _, b := range All {
		if b.Name == kind {
			return b, true
		}
	}
	return lock.Backend{}, false
}

// Open returns the Locker of kind ("" is the default) on s.
func Open(kind string, s lock.Settings) (lock.Locker, error) {
	if kind == "" {
		kind = All[0].Name
	}
	b, ok := Find(kind)
	if !ok {
		return nil, fmt.Errorf("unknown lock backend %q", kind)
	}
	return b.Open(s)
}

// KeepLease takes over the lease a Grant.Handoff describes, in the
// backend that wrote it, or every lease of a combined one
// (CombineHandoffs).
func KeepLease(handoff []byte) (lock.KeptLease, error) {
	kind := lock.HandoffKind(handoff)
	if kind == combinedKind {
		return keepCombined(handoff)
	}
	b, ok := Find(kind)
	if !ok || b.Keep == nil {
		return nil, fmt.Errorf("lock: not a lease hand-off (kind %q)", kind)
	}
	return b.Keep(handoff)
}
