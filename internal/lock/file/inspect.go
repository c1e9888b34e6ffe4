package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/lock"
)

// Inspect reports one lock. It never writes and never holds the lock for
// more than a moment: a lock that /proc/locks shows exclusively held is not
// probed at all, others get a shared, non-blocking probe on a fresh
// read-only descriptor, dropped at once. A lock whose file does not exist
// yet is free.
func (l *Locker) Inspect(ctx context.Context, name string) (lock.Status, error) {
	if err := ctx.Err(); err != nil {
		return lock.Status{}, err
	}
	path, err := l.path(name)
	if err != nil {
		return lock.Status{}, err
	}
	return l.inspect(name, path, false, procfs.Locks())
}

// inspect is Inspect on a path, given the machine's flock locks (nil when
// unknown); knownHeld skips the probe when the caller has just failed to
// take the lock.
func (l *Locker) inspect(name, path string, knownHeld bool, procLocks []procfs.Lock) (lock.Status, error) {
	st := lock.Status{Name: name}
	f, err := os.OpenFile(path, inspectFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, openError(path, err)
	}
	defer closeLocked(f) // the probe may have locked it
	id, err := regularID(f)
	if err != nil {
		return st, err
	}
	rec, haveRec, _, err := readRecord(f)
	if err != nil {
		return st, err
	}
	lockers := locksOn(procLocks, id)
	held := knownHeld || slices.ContainsFunc(lockers, func(lk procfs.Lock) bool { return lk.Write })
	if !held {
		if held, err = probe(path); err != nil {
			return st, err
		}
	}
	st.Held = held
	st.Record = rec
	if held {
		st.Record = l.classify(rec, haveRec, lockers, id)
	}
	return st, nil
}

// probe tries a shared non-blocking flock through gofrs/flock on a
// descriptor private to this call (O_NOFOLLOW: a symlink swapped in fails
// with ELOOP). Shared, so that two inspectors never see each other as
// holders; gofrs's Close unlocks only this private open file description,
// which is what a probe wants (unlike a lease, see tryLock).
func probe(path string) (held bool, err error) {
	fl := flock.New(path, flock.SetFlag(inspectFlags))
	defer func() { _ = fl.Close() }()
	ok, err := fl.TryRLock()
	if err != nil {
		return false, openError(path, err)
	}
	return !ok, nil
}

// List reports every DIR/NAME.lock file, sorted by name. A lock that
// cannot be inspected (a planted symlink, say) is left out and named in
// the returned error, next to the others' statuses.
func (l *Locker) List(ctx context.Context) ([]lock.Status, error) {
	return l.list(ctx, time.Time{})
}

// ListChangedSince is List of the lock files written at or after t only
// (by modification time, which every record write moves): a periodic look
// for new records reads the few that changed rather than every lock.
func (l *Locker) ListChangedSince(ctx context.Context, t time.Time) ([]lock.Status, error) {
	return l.list(ctx, t)
}

// list is List of the files modified at or after since (zero: all).
func (l *Locker) list(ctx context.Context, since time.Time) ([]lock.Status, error) {
	entries, err := os.ReadDir(l.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list locks: %w", err)
	}
	// One read of /proc/locks for all of them: it lists every lock of the
	// machine, and reading it per lock made a listing quadratic.
	procLocks := procfs.Locks()
	var names []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".lock")
		if !ok || !lock.ValidName(name) || e.IsDir() {
			continue
		}
		if !since.IsZero() {
			if fi, err := e.Info(); err == nil && fi.ModTime().Before(since) {
				continue // unchanged; gone or unreadable: inspect says why
			}
		}
		names = append(names, name)
	}
	out, err := lock.InspectAll(ctx, names, func(_ context.Context, name string) (lock.Status, error) {
		return l.inspect(name, filepath.Join(l.dir, name+".lock"), false, procLocks)
	})
	slices.SortFunc(out, func(a, b lock.Status) int { return strings.Compare(a.Name, b.Name) })
	return out, err
}
