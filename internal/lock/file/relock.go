package file

import (
	"errors"
	"fmt"

	"cronvisor/internal/base/statedir"
)

// Relock takes again, on a new file at its path, each lock this locker
// holds whose file was deleted (the state dir removed under a running
// daemon): a run in flight holds its flock on a file that has no name
// any more, and another process (`cronvisor run NAME`) would create a new
// file at the path and lock it, a second copy of the job beside the
// first. The new file gets the lease's record and is held with the old
// until Release; later rewrites of the record go to it. It returns how
// many locks it took again. A lock whose new file another process took
// first is an error naming it: the two copies run.
func (l *Locker) Relock() (int, error) {
	leases := l.held.All()
	n := 0
	var errs []error
	for _, le := range leases {
		ok, err := le.relock()
		if ok {
			n++
		}
		errs = append(errs, err)
	}
	return n, errors.Join(errs...)
}

// relock is Relock of one lease.
func (le *fileLease) relock() (bool, error) {
	le.Lock()
	defer le.Unlock()
	held := le.f // the newest file locked: the last of stale once relocked
	if n := len(le.stale); n > 0 {
		held = le.stale[n-1]
	}
	if le.ReleasedLocked() || !statedir.Unlinked(held) {
		return false, nil
	}
	path, err := le.locker.path(le.Name())
	if err != nil {
		return false, err
	}
	f, err := le.locker.lockOnce(path)
	if err != nil {
		return false, fmt.Errorf("lock %q: its file was deleted; taking it again: %w", le.Name(), err)
	}
	if f == nil {
		return false, fmt.Errorf("lock %q: its file was deleted, and another process holds the new one at %s", le.Name(), path)
	}
	size, encoded, err := writeRecord(f.record, le.HolderLocked(), 0)
	if err == nil && !le.locker.noSync {
		l := le.locker // the slot cursor, as a new lease's
		err = l.awaitDurable(l.durable(le.Name(), encoded, f.record), f.record)
	}
	if err != nil {
		f.close()
		return false, fmt.Errorf("lock %q: taking it again: %w", le.Name(), err)
	}
	// The old record descriptor may still be syncing (SetPID): it is
	// closed at Release, with the new lock's.
	le.stale = append(le.stale, le.rec, f.lock)
	le.rec, le.size, le.encoded = f.record, size, encoded
	return true, nil
}
