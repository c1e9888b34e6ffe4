package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"modernc.org/sqlite"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
)

// Errors of a store that cannot serve, returned (wrapped) by this package.
var (
	// ErrUnavailable: the store has no open database (Unopened, a reopen
	// failed, or Close was called).
	ErrUnavailable = errors.New("history: database not open")
	// ErrNotDatabase: the file at the history path is not a SQLite
	// database (or is corrupt); SetAside moves it out of the way.
	ErrNotDatabase = errors.New("history: not a usable database")
	// ErrDuplicate: a start or skip names a run id already recorded.
	ErrDuplicate = errors.New("history: run id already recorded")
)

// SQLite's primary result codes that classify uses.
const (
	sqliteCorrupt    = 11
	sqliteConstraint = 19
	sqliteNotADB     = 26
)

// classify wraps SQLite's "this is no database" codes as ErrNotDatabase.
func classify(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqliteCorrupt, sqliteNotADB:
			return fmt.Errorf("%w: %w", ErrNotDatabase, err)
		}
	}
	return err
}

// duplicate tells whether err is a UNIQUE violation (the run id).
func duplicate(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqliteConstraint
}

// fileID identifies a file across renames: its device and inode.
type fileID struct{ dev, ino uint64 }

func idOf(f *os.File) (fileID, error) {
	fi, err := f.Stat()
	if err != nil {
		return fileID{}, err
	}
	return statID(fi)
}

func statID(fi os.FileInfo) (fileID, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, fmt.Errorf("no inode for %s", fi.Name())
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino}, nil
}

// reader is the open database for queries.
func (s *Store) reader() (*sql.DB, error) {
	h := s.h.Load()
	if h == nil {
		return nil, fmt.Errorf("%w at %s", ErrUnavailable, s.path)
	}
	return h.db, nil
}

// deleted tells whether h's file has no name left: deleted, alone or
// with its directory (its path may then be unreachable, ENOTDIR), rather
// than renamed or replaced.
func (h *handle) deleted() bool {
	return statedir.Unlinked(h.file)
}

// moved tells whether the file at the store's path is no longer the one h
// has open: deleted, or replaced by another file. A stat per write costs
// microseconds beside the commit's fsync.
func (s *Store) moved(h *handle) bool {
	if h.deleted() {
		return true
	}
	id, err := idAt(s.path)
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	return id != h.id
}

// at tells whether the file at the store's path is id. Once opened on a
// path that was id before and is still after, every connection (all
// opened by path) has id: nothing links a file back at the path.
func (s *Store) at(id fileID) bool {
	got, err := idAt(s.path)
	return err == nil && got == id
}

func idAt(path string) (fileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, err
	}
	return statID(fi)
}

// writer is the open database for a write: it opens an unopened store and
// reopens one whose file was deleted or replaced. done ends the write and
// must be called once its commit returned: until then the handle is not
// reopened, so a copy of a deleted file (see restore) holds every commit
// made into it.
func (s *Store) writer() (h *handle, done func(), err error) {
	if s.readOnly {
		return nil, nil, fmt.Errorf("history: the store is read-only")
	}
	if s.closed.Load() {
		return nil, nil, fmt.Errorf("%w at %s (closed)", ErrUnavailable, s.path)
	}
	s.gate.RLock()
	if h := s.h.Load(); h != nil && !s.moved(h) {
		return h, s.gate.RUnlock, nil
	}
	s.gate.RUnlock()
	if _, err := s.reopen(); err != nil {
		return nil, nil, err
	}
	s.gate.RLock()
	if h = s.h.Load(); h == nil {
		s.gate.RUnlock()
		return nil, nil, fmt.Errorf("%w at %s (closed)", ErrUnavailable, s.path)
	}
	return h, s.gate.RUnlock, nil
}

// reopen closes the current database, if any, and opens the file at the
// path. A database whose file was deleted is first copied to the path
// (restore), so that no record it holds is lost; a file put in its place
// is opened as it is. An old handle whose file is still linked is closed
// before the open: its connections use the -wal and -shm files at the
// path, which the new one must not share. Those two files belong to the
// old database (SQLite keeps them when it sees its file moved), or, with
// no database at the path, to none; they are removed before the file at
// the path is opened, so that SQLite cannot replay a stranger's WAL into
// it. A deleted file's handle is closed only once its copy is open at
// the path (its connections hold their files open, unlinked): until then
// it is the only one with its records. The gate is held throughout: no
// write is in the old handle while it is copied.
func (s *Store) reopen() (*handle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return nil, fmt.Errorf("%w at %s (closed)", ErrUnavailable, s.path)
	}
	s.gate.Lock()
	defer s.gate.Unlock()
	_, err := os.Stat(s.path)
	stale := errors.Is(err, os.ErrNotExist)
	var copied string
	var old *handle // a deleted file's, open until its copy is
	if h := s.h.Load(); h != nil {
		if !s.moved(h) { // another writer reopened it meanwhile
			return h, nil
		}
		if h.deleted() {
			if copied, err = s.copyOut(h); err != nil {
				// h stays open: the next write tries again.
				s.restored("", err)
				return nil, err
			}
			old = h
		}
		s.h.Store(nil)
		if old == nil {
			_ = h.close()
		}
		stale = true
	}
	if stale {
		_ = os.Remove(s.path + "-wal")
		_ = os.Remove(s.path + "-shm")
	}
	return s.openAfter(copied, old, stale)
}

// openAfter is reopen's open of the path once the old handle is off the
// store: copied is the deleted file's copy ("" for none) and old its
// handle, closed once the copy is open at the path; stale says no
// current file was open at it (called with s.mu and the gate held).
func (s *Store) openAfter(copied string, old *handle, stale bool) (*handle, error) {
	var kept, to string
	var putErr error
	var copyID fileID
	if copied != "" {
		if copyID, putErr = idAt(copied); putErr == nil {
			kept, to, putErr = s.putBack(copied)
		}
	}
	// The copy at the path is opened, never a file made anew in its
	// place: a removal still under way (rm -rf meeting the directory made
	// again) may take the copy before it is open.
	atPath := copied != "" && !errors.Is(putErr, ErrPathTaken)
	h, setAside, err := s.openAt(!atPath)
	if atPath && !s.at(copyID) {
		// Gone before it was opened: the deleted file, still open, keeps
		// the records, and the next write copies it again.
		if err == nil {
			h.close()
			err = fmt.Errorf("history: the copy of the deleted %s left the path before it was opened", s.path)
		}
		s.h.Store(old)
		s.restored("", err)
		return nil, err
	}
	if old != nil {
		_ = old.close()
	}
	if err != nil {
		return nil, err
	}
	if setAside != "" {
		to = setAside
	}
	if copied != "" {
		s.restored(kept, putErr)
	}
	if s.onReopen != nil && (to != "" || stale && copied == "") {
		s.onReopen(s.path, to)
	}
	s.h.Store(h)
	return h, nil
}

// restored tells WithRestored's function, if any.
// A copy that cannot be made is told once, not at each write's retry,
// until one is made (called under s.mu).
func (s *Store) restored(kept string, err error) {
	failed := err != nil && kept == "" && !errors.Is(err, ErrPathTaken)
	if s.onRestore != nil && !(failed && s.copyFailed) {
		s.onRestore(s.path, kept, err)
	}
	s.copyFailed = failed
}

// openAt opens the file at the path (creating one if create), setting
// aside one that is no database, and applies the shipping asked; to is
// where a file set aside went.
func (s *Store) openAt(create bool) (h *handle, to string, err error) {
	h, err = openWritable(s.path, s.synchronous, create)
	if errors.Is(err, ErrNotDatabase) {
		// Put there while we ran: set it aside as at start-up.
		if to, err = SetAside(s.path, time.Now()); err == nil {
			h, err = openWritable(s.path, s.synchronous, create)
		}
	}
	if want := s.shipping.Load(); err == nil && want != shipUnset {
		if err = h.ship(context.Background(), want == shipOn); err != nil {
			h.close()
		}
	}
	if err != nil {
		return nil, to, err
	}
	return h, to, nil
}

// SetAside renames the database at path and its -wal and -shm files to
// PATH.corrupt-TIMESTAMP (UTC) so that a new one can be created there, and
// returns the new name of the database file.
func SetAside(path string, now time.Time) (string, error) {
	to := path + ".corrupt-" + now.UTC().Format("20060102T150405Z")
	if err := os.Rename(path, to); err != nil {
		return "", fmt.Errorf("history: set aside %s: %w", path, err)
	}
	for _, ext := range []string{"-wal", "-shm"} {
		if err := os.Rename(path+ext, to+ext); err != nil && !errors.Is(err, os.ErrNotExist) {
			return to, fmt.Errorf("history: set aside %s: %w", path+ext, err)
		}
	}
	return to, nil
}

// Writable opens the store if it is not open, and reports whether it could.
func (s *Store) Writable() error {
	_, done, err := s.writer()
	if err == nil {
		done()
	}
	return err
}

// StoreOption gives a Store an optional part, at Open or Unopened.
type StoreOption func(*Store)

// WithReopened has f told whenever the store found its file deleted or
// replaced and opened the file now at the path; setAside is where a file
// there that was no database went ("" if none).
func WithReopened(f func(path, setAside string)) StoreOption {
	return func(s *Store) { s.onReopen = f }
}

// WithDurability opens the store's connections for d: synchronous=FULL
// for run.DurabilityMachine (the default), OFF for run.DurabilityProcess
// (see synchronousNoSync).
func WithDurability(d run.Durability) StoreOption {
	return func(s *Store) { s.synchronous = synchronousFor(d) }
}

// Durability is what the store's commits survive, as WithDurability set
// it.
func (s *Store) Durability() run.Durability {
	if s.synchronous == synchronousNoSync {
		return run.DurabilityProcess
	}
	return run.DurabilityMachine
}
