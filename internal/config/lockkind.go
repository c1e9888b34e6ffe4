package config

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// LockKind is a lock backend as config checks its settings. The backends
// live in lock, which config does not import (config is plain data on a
// floor of its own), so the program registers them from above
// (RegisterLockBackends; the daemon package does it for every command),
// and config dispatches on lock_backend.type through them only.
type LockKind interface {
	Kind() string
	// AddressKey is "url", "dsn" or "" (it takes no address), and the
	// form the message shows when it is given the other.
	AddressKey() (key, hint string)
	// CheckAddress says what an address should look like and why it
	// is not that (nil: it is).
	CheckAddress(s string) (want string, why error)
	CheckTTL(d time.Duration) (used bool, err error)
	CheckPrefix(p string) (used bool, err error)
}

// lockKinds are the registered backends, in the order messages list
// them. It is process-wide because the list is the program's, not a
// file's: registered once at start-up, before a file is read.
var lockKinds struct {
	sync.RWMutex
	list []LockKind
}

// RegisterLockBackends adds the lock backends that lock_backend.type may
// name, or replaces those of the same kind.
func RegisterLockBackends(kinds ...LockKind) {
	lockKinds.Lock()
	defer lockKinds.Unlock()
	for _, k := range kinds {
		i := slices.IndexFunc(lockKinds.list, func(o LockKind) bool { return o.Kind() == k.Kind() })
		if i >= 0 {
			lockKinds.list[i] = k
		} else {
			lockKinds.list = append(lockKinds.list, k)
		}
	}
}

// lockKind returns the registered backend of kind.
func lockKind(kind string) (LockKind, bool) {
	lockKinds.RLock()
	defer lockKinds.RUnlock()
	i := slices.IndexFunc(lockKinds.list, func(k LockKind) bool { return k.Kind() == kind })
	if i < 0 {
		return nil, false
	}
	return lockKinds.list[i], true
}

// lockKindNames lists the registered kinds for a message.
func lockKindNames() string {
	lockKinds.RLock()
	defer lockKinds.RUnlock()
	if len(lockKinds.list) == 0 {
		return "(none registered: see config.RegisterLockBackends)"
	}
	names := make([]string, len(lockKinds.list))
	for i, k := range lockKinds.list {
		names[i] = k.Kind()
	}
	return strings.Join(names, ", ")
}

// AddressKey is the key of the backend's address ("url", "dsn"; "" when
// it takes none or is not registered), for messages that name it.
func (lb LockBackend) AddressKey() string {
	if k, ok := lockKind(lb.Type); ok {
		key, _ := k.AddressKey()
		return key
	}
	return ""
}
