package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/lock"
)

// lockFlags opens the descriptor the flock is taken on, which the run's
// processes inherit as fd 3: read-only, so that no process of a run (a
// `user:` job's above all) can rewrite the lock record through it; flock(2)
// does not care how a file is open. O_NOFOLLOW: a symlink planted at the
// lock path is refused (ELOOP) instead of followed. O_NONBLOCK: a FIFO
// planted there does not block the open (a read-only FIFO open waits for a
// writer); regularID refuses it, and the flag is cleared on the regular
// file (see clearNonblock). O_CLOEXEC: the file reaches a run's processes
// only through ExtraFiles.
const lockFlags = os.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_CLOEXEC | syscall.O_NONBLOCK

// recordFlags opens the supervisor's own descriptor of the record, the one
// it writes through: never passed on (O_CLOEXEC, and not in ExtraFiles), so
// only the supervisor can write the record. O_CREAT makes the file on first
// use; the file is never deleted.
const recordFlags = os.O_CREATE | os.O_RDWR | syscall.O_NOFOLLOW | syscall.O_CLOEXEC

// lockedFile is a lock file held: the locked read-only descriptor, which
// the run inherits (Grant.File), and the supervisor's writable one.
type lockedFile struct {
	lock, record *os.File
}

// close frees the lock, unless a run's process shares lock's description.
func (f *lockedFile) close() {
	f.record.Close()
	closeLocked(f.lock)
}

// tryLock returns the locked file, or nil when another holder has it.
// Every call opens its own descriptors, because flock excludes between open
// file descriptions, also within one process.
//
// It calls flock(2) itself rather than through gofrs/flock: gofrs keeps its
// *os.File private (v0.13.2 has no accessor) and its Close and Unlock do
// LOCK_UN, while the lease must hand this very open file description to
// the run's processes and must never unlock it (see fileLease.Release).
// What gofrs adds beyond the syscall (a mutex around its own state, an NFS
// reopen in O_RDWR) is not needed here.
func (l *Locker) tryLock(ctx context.Context, name, path string) (*lockedFile, error) {
	for attempt := 0; ; attempt++ {
		f, err := l.lockOnce(path)
		if f != nil || err != nil {
			if f != nil {
				l.track(name, 1)
			}
			return f, err
		}
		if attempt >= probeRetries || !l.transientHolders(name, path) {
			return nil, nil
		}
		if err := l.pause(ctx); err != nil {
			return nil, err
		}
	}
}

// lockOnce is one attempt of tryLock: nil, nil when the lock is held. A
// file that already exists costs one open until the flock is had (a held
// lock, the common refusal, costs no more than it did); the writable
// descriptor is opened after, and must name the same file.
func (l *Locker) lockOnce(path string) (*lockedFile, error) {
	f := &lockedFile{}
	lock, err := openFile(path, lockFlags)
	if errors.Is(err, fs.ErrNotExist) { // new: create it, and its directory if need be
		if f.record, err = l.createRecord(path); err == nil {
			lock, err = openFile(path, lockFlags)
		}
	}
	if err != nil {
		if f.record != nil {
			f.record.Close()
		}
		return nil, openError(path, err)
	}
	f.lock = lock
	id, ok, err := lockRegular(lock)
	if ok && err == nil && f.record == nil {
		f.record, err = openFile(path, recordFlags&^os.O_CREATE)
		if err != nil {
			err = openError(path, err)
		}
	}
	if err == nil && ok {
		err = sameFile(f.record, id)
	}
	if err != nil || !ok {
		if f.record != nil {
			f.record.Close()
		}
		closeLocked(lock) // a taken lock is ours alone yet: this frees it
		return nil, err
	}
	return f, nil
}

// createRecord opens the writable descriptor of a lock file that does not
// exist yet, creating it (and the locks directory).
func (l *Locker) createRecord(path string) (*os.File, error) {
	f, err := openFile(path, recordFlags)
	if errors.Is(err, fs.ErrNotExist) { // the directory: made on first use, or deleted since
		if err = l.ensureDir(); err == nil {
			f, err = openFile(path, recordFlags)
		}
	}
	return f, err
}

// lockRegular checks that f is a regular file, makes its descriptor
// blocking again and takes the exclusive flock without waiting; it
// returns the file's identity.
func lockRegular(f *os.File) (procfs.FileID, bool, error) {
	id, err := regularID(f)
	if err != nil {
		return id, false, err
	}
	if err := onFD(f, clearNonblock); err != nil {
		return id, false, fmt.Errorf("lock file %s: %w", f.Name(), err)
	}
	ok, err := tryFlock(f, unix.LOCK_EX)
	return id, ok, err
}

// clearNonblock leaves fd's status flags at O_RDONLY alone: the run's fd 3
// looks like any read-only file (O_NONBLOCK means nothing to a regular file
// anyway).
func clearNonblock(fd int) error {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, 0)
	return err
}

// sameFile refuses a record descriptor that names another file than the
// locked one, id: the path was replaced between the two opens (only
// someone who can write the locks directory can do that).
func sameFile(record *os.File, id procfs.FileID) error {
	got, err := regularID(record)
	if err != nil {
		return err
	}
	if got != id {
		return fmt.Errorf("%w: %s was replaced while it was being locked", lock.ErrUnsafeFile, record.Name())
	}
	return nil
}

// openFile opens path as a plain blocking file. os.OpenFile would offer
// it to the runtime's poller first, which refuses regular files: five
// system calls per acquisition for nothing.
func openFile(path string, flags int) (*os.File, error) {
	fd, err := unix.Open(path, flags, 0o600)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
