package file

import (
	"fmt"
	"os"
	"syscall"
	"time"

	"cronvisor/internal/lock"
)

// fileLease is a held file lock. Its core's mutex also guards the
// fields below.
type fileLease struct {
	lock.LeaseCore
	locker   *Locker
	f        *os.File     // locked, read-only: the run's fd 3 (Grant.File)
	rec      *os.File     // writable, the supervisor's alone: the record is written through it
	previous *lock.Record // the record found at acquisition, nil if none
	size     int          // of the record in the file, for writeRecord
	encoded  []byte       // the record as last written (encodeRecord), for the cursor journal
	unsynced bool         // the record holds a new slot cursor not yet made durable (see Acquire)
	synced   <-chan error // the sync SetPID started; Release waits for it
	// stale are descriptors Relock replaced, closed at Release: the
	// deleted file's record descriptor, and the new file's lock.
	stale []*os.File
}

func (l *Locker) newLease(name string, f *lockedFile, h lock.Record, size int, unsynced bool) *fileLease {
	le := &fileLease{locker: l, f: f.lock, rec: f.record, size: size, unsynced: unsynced}
	le.Init(name, h, le)
	return le
}

// SetRetry marks the record as waiting for the slot's next attempt, due
// at at (see Record.RetryAt). While it waits the lock's only holder is
// the supervisor (the attempt's processes are gone), so the record names
// it: `locks` and `status` show a live holder, not the attempt's dead pid.
func (le *fileLease) SetRetry(at time.Time) error {
	return le.Rewrite("set retry", func(h *lock.Record) {
		h.RetryAt = at
		if !at.IsZero() {
			h.PID = h.SupervisorPID
		}
	})
}

// StoreRecord rewrites the line in the file, and starts making a new slot
// cursor durable (see Locker.Acquire).
func (le *fileLease) StoreRecord(h lock.Record, _ string) error {
	size, encoded, err := writeRecord(le.rec, h, le.size)
	le.size = size
	if err != nil {
		return err
	}
	le.encoded = encoded
	if le.unsynced {
		// In the background, while the run goes on: the run's start
		// waits for nothing, and Release waits for the sync.
		le.unsynced = false
		le.synced = le.locker.durable(le.Name(), encoded, le.rec)
	}
	return nil
}

// durable makes the record just written through rec (encoded, as
// writeRecord returned it) durable in the background: through the cursor
// journal if the locker has one, else by rec's own fdatasync.
func (l *Locker) durable(name string, encoded []byte, rec *os.File) <-chan error {
	if l.journal != nil {
		return l.journal.Append(name, encoded)
	}
	done := make(chan error, 1)
	go func() { done <- syncData(rec) }()
	return done
}

// awaitDurable waits for durable's answer. Should the journal fail (or be
// closed already), rec's own fdatasync keeps the promise.
func (l *Locker) awaitDurable(done <-chan error, rec *os.File) error {
	err := <-done
	if err != nil && l.journal != nil {
		err = syncData(rec)
	}
	return err
}

// grant is what a file lease offers: its file, and the record it found.
func (le *fileLease) grant() lock.Grant {
	g := lock.Grant{Lease: le, File: le.f, Preceded: true, RecordsInFlight: true}
	if le.previous != nil {
		prev := le.previous.Clone()
		g.Previous = &prev
	}
	return g
}

// Release rewrites the record without InFlight and closes the
// supervisor's descriptors, nothing more. It must not flock(LOCK_UN) (as
// gofrs/flock's Unlock and Close do): that would unlock the open file
// description shared with the run's processes that inherited it, letting
// a later run overlap a survivor. The kernel frees the lock when the last
// descriptor closes. The record stays: it holds the slot cursor. The
// rewrite is not synced: after a machine crash a record still in flight
// only makes the next supervisor look its run up in history and find it
// closed.
func (le *fileLease) Release() error { return le.release(false) }

// ReleaseInFlight is Release leaving the record's InFlight set.
func (le *fileLease) ReleaseInFlight() error { return le.release(true) }

func (le *fileLease) release(inFlight bool) error {
	// Holding the mutex to the end: an Acquire of this process meanwhile
	// waits for the lock to be free rather than find it held.
	le.Lock()
	defer le.Unlock()
	if !le.MarkReleasedLocked() {
		return nil
	}
	le.locker.held.Forget(le.Name(), le)
	defer le.locker.track(le.Name(), -1)
	var syncErr error
	switch {
	case le.synced != nil:
		syncErr = le.locker.awaitDurable(le.synced, le.rec)
	case le.unsynced: // the run never started; its slot is consumed all the same
		syncErr = le.locker.awaitDurable(le.locker.durable(le.Name(), le.encoded, le.rec), le.rec)
	}
	var writeErr error
	if !inFlight {
		h := le.HolderLocked()
		h.InFlight, h.RetryAt = false, time.Time{}
		_, _, writeErr = writeRecord(le.rec, h, le.size)
	}
	le.rec.Close() // carries no lock; only the error of the lock's close matters
	closeErr := closeLocked(le.f)
	for _, f := range le.stale {
		closeLocked(f)
	}
	switch {
	case syncErr != nil:
		return fmt.Errorf("sync lock record: %w", syncErr)
	case writeErr != nil:
		return fmt.Errorf("lock %q: release: %w", le.Name(), writeErr)
	}
	return closeErr
}

// closeLocked closes a descriptor that may carry a lock. Under
// syscall.ForkLock, which os/exec holds for writing from before the
// fork until the child has exec'd: a child forked while the descriptor
// was open would otherwise keep a copy, and with it the lock, for a
// moment after this close returns.
func closeLocked(f *os.File) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	return f.Close()
}
