package statedir

import (
	"os"
	"path/filepath"
)

// WriteFileAtomic writes data to path through a temporary file beside it,
// renamed over path: a reader (a daemon watching the file, the next
// supervisor reading an End) finds the old content or the new, never part
// of one. With sync, the file is synced before the rename and its
// directory after, so that this holds after a power cut too. The file
// gets perm exactly, whatever the umask.
func WriteFileAtomic(path string, data []byte, perm os.FileMode, sync bool) error {
	dir := filepath.Dir(path)
	// A leading dot and a suffix of its own: no reader of the dir takes
	// the temporary file for one of its names (an End, a run's log).
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = fill(f, data, perm, sync)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if sync {
		_ = SyncDir(dir) // the rename is done: a failed sync only weakens the power-cut promise
	}
	return nil
}

// SyncDir makes a directory's entries durable: a file created or renamed
// in it survives a machine crash only once this returns.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// fill writes data to f, sets its mode, syncs it if asked, and closes it.
func fill(f *os.File, data []byte, perm os.FileMode, sync bool) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
