package history

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"cronvisor/internal/base/statedir"
)

// ErrPathTaken: a deleted database's records could not be put back at
// its path, because another file had been put there meanwhile; they are
// kept beside it (see WithRestored).
var ErrPathTaken = errors.New("history: another database is at the path")

// restoreTimeout bounds the copy of a deleted database: writes wait for
// it (the gate), so it must end even on a stuck disk.
const restoreTimeout = time.Minute

// WithRestored has f told whenever the store found its file deleted (the
// file alone, or the whole state dir) and copied the database it still
// had open back to the path. err nil: every record is at the path again.
// ErrPathTaken: another file had been put there meanwhile and is used
// from now on; the copy is kept at kept. Any other error: no copy could
// be made, or it left the path before it was opened; the store keeps the
// deleted file open and tries again at the next write, which fails until
// then (the Writer holds it).
func WithRestored(f func(path, kept string, err error)) StoreOption {
	return func(s *Store) { s.onRestore = f }
}

// copyOut copies the database h has open, whose file was deleted, to a
// new file beside the path, through the connection pinned at its open:
// the pool's others may have been opened since, on whatever is at the
// path now. The copy reads h's WAL as any reader does, so it holds every
// commit made into the deleted file (the caller holds the gate). The
// directory is made again, 0700, when it is gone too.
func (s *Store) copyOut(h *handle) (string, error) {
	if h.keep == nil {
		return "", fmt.Errorf("history: %s was deleted and no connection to it is left", s.path)
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return "", fmt.Errorf("history: recreate the directory of %s: %w", s.path, err)
	}
	tmp := s.path + ".restore-" + strconv.Itoa(os.Getpid())
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("history: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
	defer cancel()
	if _, err := h.keep.ExecContext(ctx, "VACUUM INTO ?", tmp); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("history: copy the deleted %s to %s: %w", s.path, tmp, err)
	}
	if err := syncFile(tmp); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("history: copy of the deleted %s: %w", s.path, err)
	}
	return tmp, nil
}

// putBack puts the copy at the path, unless another database was put
// there meanwhile (a link, not a rename, cannot replace it): the copy is
// then kept as PATH.deleted-TIMESTAMP and its name returned with
// ErrPathTaken. An empty file there is no one's database (a connection
// opened on the path after the deletion makes one) and is replaced; a
// file that is no database is set aside first (setAside: where it went).
func (s *Store) putBack(tmp string) (kept, setAside string, err error) {
	err = os.Link(tmp, s.path)
	if errors.Is(err, fs.ErrExist) {
		switch what := sqliteFile(s.path); {
		case what == emptyFile:
			err = os.Rename(tmp, s.path)
			tmp = ""
		case what == otherFile:
			if setAside, err = SetAside(s.path, time.Now()); err == nil {
				err = os.Link(tmp, s.path)
			}
		default:
			kept = s.path + ".deleted-" + time.Now().UTC().Format("20060102T150405Z")
			if rerr := os.Rename(tmp, kept); rerr != nil {
				return tmp, "", fmt.Errorf("%w (%s); the deleted one's copy stays at %s: %w", ErrPathTaken, s.path, tmp, rerr)
			}
			return kept, "", fmt.Errorf("%w (%s); the deleted one's records are kept at %s", ErrPathTaken, s.path, kept)
		}
	}
	if err != nil {
		return tmp, setAside, fmt.Errorf("history: put the copy %s at %s: %w", tmp, s.path, err)
	}
	if tmp != "" {
		_ = os.Remove(tmp)
	}
	return "", setAside, statedir.SyncDir(filepath.Dir(s.path))
}

// What sqliteFile found at a path.
const (
	emptyFile = iota
	otherFile
	databaseFile
)

// sqliteFile tells an empty file, one that is no SQLite database by its
// header, and a database (or anything it cannot read, left alone).
func sqliteFile(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return databaseFile
	}
	defer f.Close()
	head := make([]byte, len(sqliteMagic))
	n, err := io.ReadFull(f, head)
	switch {
	case n == 0 && err != nil:
		return emptyFile
	case string(head[:n]) != sqliteMagic:
		return otherFile
	}
	return databaseFile
}

// sqliteMagic begins every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// syncFile makes a file's data durable.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Chmod(0o600)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
