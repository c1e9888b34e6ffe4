package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite" // also registers the "sqlite" driver

	"cronvisor/internal/base/run"
)

// busyTimeoutMS is how long a write waits for another supervisor's write to
// finish before it fails with SQLITE_BUSY. Writes are single small rows, so
// seconds of waiting mean something is stuck; a long Prune is the worst case.
const busyTimeoutMS = 10000

// synchronousMode is FULL rather than NORMAL: in WAL mode NORMAL already
// survives a crash of the process (SIGKILL), but a power loss may roll back
// the last commits, and the first thing read after a reboot is exactly this
// table (the last slot for catch_up, CRONVISOR_LAST_OK_SLOT). FULL costs one
// fsync of the WAL per commit, which a job supervisor's write rate
// affords (see BenchmarkInsert).
const synchronousMode = "FULL"

// synchronousNoSync is the mode of durability: process (WithDurability).
// SQLite documents that with synchronous=OFF "if the application running
// SQLite crashes, the data will be safe, but the database might become
// corrupted if the operating system crashes or the computer loses power"
// (https://www.sqlite.org/pragma.html#pragma_synchronous): a commit is
// handed to the kernel whole before COMMIT returns, and the page cache
// outlives the process. That is exactly the promise of that mode, whose
// state dir is typically on tmpfs, where a sync writes nothing anyway.
// journal_mode stays WAL, so readers still never block the writer.
const synchronousNoSync = "OFF"

// synchronousFor is the synchronous pragma that d asks for.
func synchronousFor(d run.Durability) string {
	if d.Syncs() {
		return synchronousMode
	}
	return synchronousNoSync
}

// Store is the run history of one state dir. It is safe for concurrent use,
// and several processes may share one database file on the same host (WAL
// needs shared memory, so not over a network file system).
//
// A writable store heals itself: before and after each write it checks
// that the file it has open is still the one at its path, and reopens it
// when the file was deleted or replaced (every later write would go into
// an unlinked file otherwise), a deleted one first copied back to the
// path with its records (see reopen); a store that could not be opened
// at all (Unopened) tries again at each write.
type Store struct {
	path     string // absolute
	readOnly bool
	h        atomic.Pointer[handle] // nil: not open (Unopened, or a reopen failed)
	closed   atomic.Bool
	mu       sync.Mutex // serialises opening and reopening
	onReopen func(path, setAside string)
	// onRestore is told of a deleted file's copy put back (WithRestored);
	// copyFailed says the last copy could not be made (under mu).
	onRestore  func(path, kept string, err error)
	copyFailed bool
	// gate is held shared by each write from its handle to its commit
	// (writer), exclusively by a reopen: a deleted file is copied with no
	// write in it, and no write goes into it after.
	gate sync.RWMutex
	// shipping is what SetShipping last asked (shipUnset, shipOn,
	// shipOff), applied again to a file opened later: an unopened store
	// that opens, or a file deleted or replaced.
	shipping atomic.Int32
	// synchronous is the pragma each connection opens with (see
	// WithDurability); every reopen keeps it.
	synchronous string
	// schedulesDue says schedules' versions may wait to be shipped, so
	// that the shipper's idle rounds skip the query (see
	// UnshippedSchedules); true until a round found none.
	schedulesDue atomic.Bool
}

// handle is one open database file.
type handle struct {
	db *sql.DB
	// Prepared once for the writer: preparing them per statement was a
	// third of a history write's CPU. Nil in a read-only store.
	insert, update, endUpdate, selectRun *sql.Stmt
	id                                   fileID // the file opened, to notice its replacement
	// keep is a connection opened with the file and held for its life,
	// so that a file deleted while open can still be copied out (copyOut):
	// the pool opens its other connections by path, when it needs them.
	// Nil in a read-only store.
	keep *sql.Conn
	// file is the database file, open for the handle's life, to tell a
	// deleted file (no link left: see deleted) from one renamed; it is
	// closed after SQLite's connections, whose POSIX locks a close of
	// any descriptor of the file would drop. Nil in a read-only store.
	file *os.File
}

// Open opens or creates the history database at path, creating its
// directory, and brings its schema up to date. A file that is not a
// SQLite database is ErrNotDatabase.
func Open(path string, opts ...StoreOption) (*Store, error) {
	s, err := Unopened(path, opts...)
	if err != nil {
		return nil, err
	}
	h, err := openWritable(s.path, s.synchronous, true)
	if err != nil {
		return nil, err
	}
	s.h.Store(h)
	return s, nil
}

// Unopened returns a store on path that is not open yet: reads fail with
// ErrUnavailable and every write tries to open the file first. For a
// supervisor whose state dir cannot take the database now (read-only, full)
// and may later.
func Unopened(path string, opts ...StoreOption) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("history: %s: %w", path, err)
	}
	s := &Store{path: abs, synchronous: synchronousMode}
	s.schedulesDue.Store(true)
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// openWritable opens (creating if create, and migrating) the database at
// abs, its connections with the synchronous pragma sync.
func openWritable(abs, sync string, create bool) (*handle, error) {
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	flag, mode := os.O_RDWR, "rw"
	if create {
		flag, mode = flag|os.O_CREATE, "rwc"
	}
	// Create the file ourselves so it is 0600: SQLite would use 0644, and
	// it gives the -wal and -shm files the database file's mode.
	f, err := os.OpenFile(abs, flag, 0o600)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	id, err := idOf(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("history: %w", err)
	}
	h, err := openDSN(dsn(abs, sync, mode))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("history: open %s: %w", abs, classify(err))
	}
	h.id, h.file = id, f
	if err := h.setup(context.Background()); err != nil {
		h.close()
		return nil, fmt.Errorf("history: open %s: %w", abs, classify(err))
	}
	if err := h.prepare(); err != nil {
		h.close()
		return nil, fmt.Errorf("history: open %s: %w", abs, classify(err))
	}
	// One more connection than the pool's others, for keep.
	h.db.SetMaxOpenConns(maxConns + 1)
	if h.keep, err = h.db.Conn(context.Background()); err != nil {
		h.close()
		return nil, fmt.Errorf("history: open %s: %w", abs, classify(err))
	}
	return h, nil
}

// prepare prepares the write statements.
func (h *handle) prepare() error {
	for _, p := range []struct {
		stmt  **sql.Stmt
		query string
	}{{&h.insert, insertSQL}, {&h.update, updateSQL}, {&h.endUpdate, endUpdateSQL}, {&h.selectRun, selectRunSQL}} {
		st, err := h.db.Prepare(p.query)
		if err != nil {
			return err
		}
		*p.stmt = st
	}
	return nil
}

// setup switches the file to WAL and migrates it. Switching a new file to
// WAL while another supervisor does the same can fail with SQLITE_BUSY
// without waiting (SQLite refuses to wait where two lock upgrades could
// deadlock), so both steps are retried until busyTimeoutMS has passed.
func (h *handle) setup(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, busyTimeoutMS*time.Millisecond)
	defer cancel()
	wal := func() error {
		var mode string
		if err := h.db.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
			return err
		}
		if !strings.EqualFold(mode, "wal") {
			return fmt.Errorf("journal_mode is %q, not wal", mode)
		}
		return nil
	}
	if err := retryBusy(ctx, wal); err != nil {
		return fmt.Errorf("WAL mode: %w", err)
	}
	if err := retryBusy(ctx, func() error { return h.migrate(ctx) }); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// OpenReadOnly opens an existing database for queries only, for `cronvisor
// history` and `status` without a daemon. It never writes, migrates or
// creates anything; a missing file is ErrNoHistory, which the caller may
// show as an empty history.
func OpenReadOnly(path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("history: %s: %w", path, err)
	}
	if _, err := os.Stat(abs); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w at %s", ErrNoHistory, abs)
		}
		return nil, fmt.Errorf("history: %w", err)
	}
	h, err := openDSN(dsn(abs, synchronousMode, "ro"))
	if err != nil {
		return nil, fmt.Errorf("history: open %s: %w", abs, classify(err))
	}
	v, err := h.version(context.Background())
	if err == nil && v != len(migrations) {
		err = fmt.Errorf("%w: version %d, this cronvisor reads %d (start the daemon to migrate)",
			ErrSchema, v, len(migrations))
	}
	if err != nil {
		h.close()
		return nil, fmt.Errorf("history: %s: %w", abs, classify(err))
	}
	s := &Store{path: abs, readOnly: true}
	s.h.Store(h)
	return s, nil
}

// dsn builds a file: URI so that SQLite honours mode ("ro", "rw", or
// "rwc" to create the file); the path is escaped so that '?' or '#' in a
// state dir name cannot end it.
func dsn(abs, sync, mode string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	q.Set("mode", mode)
	if mode != "ro" {
		// journal_mode is set once, by setup; synchronous is per
		// connection. The driver runs the _pragma list busy_timeout
		// first, the rest in lexicographic order: the quoted schema name
		// puts synchronous before auto_vacuum, whose write on a new file
		// (and its commit's syncs) would otherwise come at the default,
		// FULL, whatever sync says.
		q.Add("_pragma", `"main".synchronous(`+sync+")")
		// A new database keeps its free pages apart so that a prune can
		// hand them back (Prune's vacuum); on a database created before,
		// without it, this does nothing (switching needs a VACUUM).
		q.Add("_pragma", "auto_vacuum(incremental)")
		// Write transactions take the write lock at BEGIN, so two
		// supervisors never deadlock upgrading read locks (which
		// busy_timeout cannot resolve).
		q.Set("_txlock", "immediate")
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: q.Encode()}
	return u.String()
}

// maxConns is the pool's size: a handful of connections, so that readers
// (UI, control socket) run beside the history writer; SQLite serialises
// writers anyway.
const maxConns = 4

func openDSN(dsn string) (*handle, error) {
	// Commits sync with fdatasync(2), as SQLite built by a distribution
	// does: the same data and size reach the disk, without the timestamps
	// that fsync(2) writes as well (one more block write per commit). The
	// switch is process-wide; an error means this platform has only fsync.
	_, _ = sqlite.Fdatasync(true)
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(maxConns)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, err
	}
	return &handle{db: db}, nil
}

// Close releases the database; a store must not be used afterwards (its
// writes fail instead of reopening it).
func (s *Store) Close() error {
	s.closed.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gate.Lock() // the writes under way end first
	defer s.gate.Unlock()
	h := s.h.Swap(nil)
	if h == nil {
		return nil
	}
	return h.close()
}

func (h *handle) close() error {
	if h.keep != nil {
		h.keep.Close()
	}
	for _, st := range []*sql.Stmt{h.insert, h.update, h.endUpdate, h.selectRun} {
		if st != nil {
			st.Close()
		}
	}
	err := h.db.Close()
	if h.file != nil {
		h.file.Close()
	}
	return err
}
