// Package file is the flock(2) lock backend, the default (Backend): one
// file per lock, STATE_DIR/locks/NAME.lock, whose flock any other program
// using `flock -n` on the same file respects, and which outlives a
// supervisor while its run's processes hold the file. The lock's record
// is one JSON line in that file, written by the lease core of package
// lock through the supervisor's own descriptor.
package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
)

// inspectFlags is enough for flock(2) and reading, and cannot create or
// change anything. O_NONBLOCK keeps a FIFO planted at the path from
// blocking the open (read-only FIFO opens wait for a writer); it changes
// nothing for regular files, and this descriptor is never shared.
const inspectFlags = os.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_CLOEXEC | syscall.O_NONBLOCK

// probeRetries bounds how often Acquire retries, a millisecond apart, while
// the lock's only holders are about to go (see transientHolders): a
// scheduled fire must not be skipped because `cronvisor locks` looked at
// the lock, or a job was being forked, at that very instant.
const probeRetries = 20

// Locker is the flock(2) backend: one file per lock, DIR/NAME.lock.
type Locker struct {
	dir   string
	host  string     // os.Hostname, looked up once
	inRun lock.InRun // nil: no process is known as a run's but by its record's pids
	// pause waits between Acquire's retries (see probeRetries); tests
	// replace it to act at that moment.
	pause func(ctx context.Context) error
	// noSync leaves slot cursors in the page cache (durability: process):
	// see WithDurability.
	noSync bool
	// journal makes new slot cursors durable in groups (nil: each lock
	// file is synced alone): see WithCursorJournal.
	journal *cursorJournal

	mu   sync.Mutex
	live map[string]int // leases not yet released, by lock name, under mu
	held lock.OwnLeases[*fileLease]
}

var _ lock.Locker = (*Locker)(nil)

// NewLocker returns a locker on dir (STATE_DIR/locks). The directory is
// created, mode 0700, by the first Acquire that needs it. inRun tells the
// processes of a run that hold its lock after its supervisor died (nil:
// only the record's pids are known as the run's).
func NewLocker(dir string, inRun lock.InRun, opts ...Option) *Locker {
	l := &Locker{dir: dir, host: lock.LocalHost(), inRun: inRun, pause: pauseMillisecond, live: make(map[string]int),
		held: lock.NewOwnLeases[*fileLease]()}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Option configures a Locker.
type Option func(*Locker)

// WithDurability syncs a record with a new slot cursor (see Acquire)
// unless d is run.DurabilityProcess. Without the sync the record is still
// written before the exec, into the page cache, which every process that
// opens the file reads and which outlives the supervisor: a cursor is
// lost only by a crash of the machine, which that mode does not promise
// to survive.
func WithDurability(d run.Durability) Option {
	return func(l *Locker) { l.noSync = !d.Syncs() }
}

// WithCursorJournal makes the records that need a sync (see
// WithDurability) durable through a journal of this process in dir,
// STATE_DIR/cursors, one fdatasync for all the records ready, rather
// than one per lock file; "" keeps a sync per lock file. The process that
// opens such a locker to take locks calls Replay first.
func WithCursorJournal(dir string) Option {
	return func(l *Locker) {
		if dir != "" {
			l.journal = newCursorJournal(dir)
		}
	}
}

// LogTo logs the cursor journal's failures and recovery to log
// (lock.Logged).
func (l *Locker) LogTo(log *slog.Logger) {
	if l.journal != nil {
		l.journal.mu.Lock()
		l.journal.log = log
		l.journal.mu.Unlock()
	}
}

// Close waits for the cursor journal's queued records to be durable and
// closes it; leases released after it sync their own files.
func (l *Locker) Close() error {
	if l.journal == nil {
		return nil
	}
	return l.journal.Close()
}

func pauseMillisecond(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Millisecond):
		return nil
	}
}

func (l *Locker) path(name string) (string, error) {
	if err := lock.CheckName(name); err != nil {
		return "", err
	}
	return filepath.Join(l.dir, name+".lock"), nil
}

// Acquire takes the lock without waiting. On success the record is
// written. With CheckSlot the record is made durable too, because the slot
// cursor is what keeps a slot from running twice after a machine crash
// (catch_up after a reboot), but not here: SetPID, after the exec, starts
// making it durable beside the run (the cursor journal's group sync, or
// the file's own fdatasync without one) and Release waits for it (Release
// makes it durable itself for a run that never started). Before the exec it was a third of the
// time from fire to exec; after it, a crash of the machine in the
// millisecond after the exec is the only way to lose a cursor, as it is to
// lose the history's start record.
// Records without a cursor change (manual runs) are not synced: after a
// crash their pids mean nothing. With durability: process no record is
// synced (WithDurability). A supervisor that dies loses nothing:
// the written record is in the page cache.
func (l *Locker) Acquire(ctx context.Context, req lock.Request) (lock.Grant, error) {
	if err := ctx.Err(); err != nil {
		return lock.Grant{}, err
	}
	path, err := l.path(req.Name)
	if err != nil {
		return lock.Grant{}, err
	}
	if req.CheckSlot && req.Record.Slot.IsZero() {
		return lock.Grant{}, fmt.Errorf("lock %q: CheckSlot needs a slot", req.Name)
	}
	if h, ok := l.ownHolder(req.Name); ok {
		return lock.Grant{}, &lock.HeldError{Lock: req.Name, Record: h}
	}
	f, err := l.tryLock(ctx, req.Name, path)
	if err != nil {
		return lock.Grant{}, err
	}
	if f == nil {
		st, err := l.inspect(req.Name, path, true, procfs.Locks())
		held := &lock.HeldError{Lock: req.Name, Record: st.Record}
		if err != nil { // still a held lock to the caller: skip, don't fail
			return lock.Grant{}, fmt.Errorf("%w (holder unknown: %v)", held, err)
		}
		return lock.Grant{}, held
	}
	lease, err := l.claim(f, req)
	if err != nil {
		f.close() // our descriptors are the only ones yet: this frees the lock
		l.track(req.Name, -1)
		return lock.Grant{}, err
	}
	return lease.grant(), nil
}

// ownHolder returns the holder of the lease this process holds on name, if
// any. flock would refuse the lock then (it excludes between open file
// descriptions of one process too), so a fire of a job still running here,
// the common skip, costs no open, no flock, no /proc/locks parse and no
// ForkLock: with hundreds of fires a second those starved the forks.
func (l *Locker) ownHolder(name string) (lock.Record, bool) {
	le := l.held.Get(name)
	if le == nil {
		return lock.Record{}, false
	}
	le.Lock()
	defer le.Unlock()
	if le.ReleasedLocked() {
		return lock.Record{}, false
	}
	return le.HolderLocked().Clone(), true
}

// track counts live leases per lock name, for transientHolders.
func (l *Locker) track(name string, delta int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.live[name] += delta; l.live[name] <= 0 {
		delete(l.live, name)
	}
}

func (l *Locker) hasLive(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.live[name] > 0
}

// ensureDir creates the locks directory 0700, whatever the umask.
func (l *Locker) ensureDir() error {
	if _, err := os.Stat(l.dir); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return err
	}
	return os.Chmod(l.dir, 0o700)
}

// tryFlock takes a non-blocking flock of the given kind on f.
func tryFlock(f *os.File, how int) (bool, error) {
	ferr := onFD(f, func(fd int) error { return unix.Flock(fd, how|unix.LOCK_NB) })
	switch {
	case errors.Is(ferr, unix.EWOULDBLOCK):
		return false, nil
	case ferr != nil:
		return false, fmt.Errorf("flock %s: %w", f.Name(), ferr)
	}
	return true, nil
}

// transientHolders reports whether the lock's holders may be gone in a
// moment, judging by /proc/locks just after a failed attempt: it is so
// unless an exclusive lock belongs to another process, or to this one
// while this locker has a lease on the name. Shared locks are Inspect
// probes passing by (cronvisor's and flock(1)'s holders are exclusive). An
// exclusive lock of this process without a lease is a released descriptor
// that a concurrently forked child has not closed yet (or survivors of a
// run, which only cost the retries). No lock at all means the holder left
// in between, or is invisible (another pid namespace), again only costing
// the retries.
func (l *Locker) transientHolders(name, path string) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	self := procfs.Self()
	for _, lk := range locksOn(procfs.Locks(), procfs.IDOf(fi)) {
		if lk.Write && (lk.PID != self || l.hasLive(name)) {
			return false
		}
	}
	return true
}

// openError explains an open failure, symlinks above all.
func openError(path string, err error) error {
	if errors.Is(err, syscall.ELOOP) {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%w: %s is a symbolic link (refusing to follow it)", lock.ErrUnsafeFile, path)
		}
	}
	return fmt.Errorf("open lock file: %w", err)
}

// regularID checks that f is a regular file and returns its identity.
func regularID(f *os.File) (procfs.FileID, error) {
	fi, err := f.Stat()
	if err != nil {
		return procfs.FileID{}, fmt.Errorf("stat lock file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return procfs.FileID{}, fmt.Errorf("%w: %s is not a regular file (%s)", lock.ErrUnsafeFile, f.Name(), fi.Mode().Type())
	}
	return procfs.IDOf(fi), nil
}

// claim runs the slot check and writes the new record on a locked file.
func (l *Locker) claim(f *lockedFile, req lock.Request) (*fileLease, error) {
	prev, hadPrev, size, err := readRecord(f.lock)
	if err != nil {
		return nil, err
	}
	h := lock.NewRecord(req.Record, l.host)
	h.InFlight = true // until Release (Grant.RecordsInFlight)
	h.Slots = prev.Clone().Slots
	if req.CheckSlot {
		if last, ok := prev.Slots[h.Job]; ok && !h.Slot.After(last) {
			return nil, &lock.SlotDoneError{Lock: req.Name, Record: prev}
		}
		if h.Slots == nil {
			h.Slots = make(map[string]time.Time, 1)
		}
		h.Slots[h.Job] = h.Slot
	}
	size, encoded, err := writeRecord(f.record, h, size)
	if err != nil {
		return nil, fmt.Errorf("lock %q: %w", req.Name, err)
	}
	le := l.newLease(req.Name, f, h, size, req.CheckSlot && !l.noSync)
	le.encoded = encoded
	if hadPrev {
		le.previous = &prev
	}
	l.held.Add(req.Name, le)
	return le, nil
}
