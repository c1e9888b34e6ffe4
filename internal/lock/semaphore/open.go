package semaphore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"cronvisor/internal/lock"
)

// defaultPrefix is the job locks' prefix of the backends that take one
// (Redis's DefaultKeyPrefix, SQL's DefaultSQLPrefix), when the user gave
// none; a test checks that they agree.
const defaultPrefix = "cronvisor:"

// slotPrefix is what the slots' prefix ends with, after the job locks'
// prefix without its final ':'. The ':' keeps slots apart from job
// locks: a job lock's name, after the prefix, is of the job-name
// alphabet, which has no ':'.
const slotPrefix = ".resource:"

// resourcesDir is the file backend's slot directory, beside the locks'.
const resourcesDir = "resources"

// Open returns the semaphores of sizes (resource name -> slots) on the
// job locks' backend b, in a namespace of their own derived from s, the
// job locks' settings: for a backend without a prefix (file), the
// directory "resources" beside s.LocksDir; for the others, the job
// locks' prefix ("cronvisor:" by default) without its final ':',
// followed by ".resource:". The value it returns is also an io.Closer,
// which closes the slots' own connections (network backends).
func Open(b lock.Backend, s lock.Settings, sizes map[string]int) (Semaphores, error) {
	for name, n := range sizes {
		if !lock.ValidName(name) || n < 1 || n > MaxSize {
			return nil, fmt.Errorf("resource %q of %d slots: use letters, digits, '_', '.' and '-', and 1 to %d slots",
				name, n, MaxSize)
		}
	}
	ss, err := slotSettings(b, s)
	if err != nil {
		return nil, err
	}
	l, err := b.Open(ss)
	if err != nil {
		return nil, err
	}
	sm := newSems(l, sizes)
	if ws, ok := waitSettings(b, ss); ok {
		if sm.waits, err = b.Open(ws); err != nil {
			_ = sm.Close()
			return nil, err
		}
	}
	return sm, nil
}

// waitSettings are the slots' settings ss moved to the waits' namespace
// (announce.go); false for a backend without a prefix (file).
func waitSettings(b lock.Backend, ss lock.Settings) (lock.Settings, bool) {
	if used, _ := b.CheckPrefix(""); !used {
		return ss, false
	}
	ss.Prefix = strings.TrimSuffix(ss.Prefix, slotPrefix) + waitPrefix
	_, err := b.CheckPrefix(ss.Prefix)
	return ss, err == nil
}

// MaxSize is the most slots a resource may have.
const MaxSize = 1000

// slotSettings are s moved to the slots' namespace (see Open).
func slotSettings(b lock.Backend, s lock.Settings) (lock.Settings, error) {
	if used, _ := b.CheckPrefix(""); !used {
		if s.LocksDir == "" {
			return s, fmt.Errorf("resources: the %s backend has no locks directory", b.Name)
		}
		s.LocksDir = filepath.Join(filepath.Dir(filepath.Clean(s.LocksDir)), resourcesDir)
		return s, ensureDir(s.LocksDir)
	}
	p := s.Prefix
	if p == "" {
		p = defaultPrefix
	}
	s.Prefix = strings.TrimSuffix(p, ":") + slotPrefix
	if _, err := b.CheckPrefix(s.Prefix); err != nil {
		return s, fmt.Errorf("resources: prefix %q: %w", s.Prefix, err)
	}
	return s, nil
}

// ensureDir creates dir 0700 whatever the umask, as the file backend
// makes its locks directory.
func ensureDir(dir string) error {
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.Chmod(dir, 0o700)
}

// slotLock is the lock name of slot k of res: "db.0". A resource name
// has no '/', and k is the part after the last '.', so two slots of
// different resources never share a lock.
func slotLock(res string, k int) string { return res + "." + strconv.Itoa(k) }

// resourceOf is slotLock undone: the declared resource whose slot (or
// index, announce.go) has the lock name "NAME.K".
func (s *sems) resourceOf(name string) (string, bool) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return "", false
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return "", false
	}
	res := name[:i]
	_, ok := s.sizes[res]
	return res, ok
}

// SlotName is how slot k of res is named to people and runs: "db/0".
func SlotName(res string, k int) string { return res + "/" + strconv.Itoa(k) }

// sortedNames is the keys of sizes, sorted.
func sortedNames(sizes map[string]int) []string {
	names := make([]string, 0, len(sizes))
	for n := range sizes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Close closes the slots' and the waits' lockers when they hold
// connections (Redis, SQL). Slots still held lose their leases.
func (s *sems) Close() error {
	var errs []error
	for _, l := range []lock.Locker{s.locker, s.waits} {
		if c, ok := l.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}
