package history

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"cronvisor/internal/base/statedir"
)

// Relink gives a log whose file was deleted (its state dir removed under
// a running run) a file at its path again: a new one holding what the
// deleted one held, which the run's later lines follow. A log whose file
// still has a name is left alone. It reports whether it made one.
func (l *Log) Relink() (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || !statedir.Unlinked(l.f) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return false, fmt.Errorf("history: log %s: %w", l.path, err)
	}
	// The deleted file is read through /proc: the log's own descriptor
	// is write-only.
	old, err := os.Open("/proc/self/fd/" + strconv.Itoa(int(l.f.Fd())))
	if err != nil {
		return false, fmt.Errorf("history: log %s: read the deleted file: %w", l.path, err)
	}
	defer old.Close()
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false, fmt.Errorf("history: log %s: %w", l.path, err)
	}
	if _, err := io.Copy(f, old); err != nil {
		f.Close()
		_ = os.Remove(l.path)
		return false, fmt.Errorf("history: log %s: copy the deleted file: %w", l.path, err)
	}
	l.f.Close()
	l.f = f
	return true, nil
}

// RelinkLogs gives every running run's log whose file was deleted a file
// at its path again (Log.Relink), and returns how many it made.
func (w *Writer) RelinkLogs() (int, error) {
	w.mu.Lock()
	logs := make([]*runLog, 0, len(w.logs))
	for _, l := range w.logs {
		logs = append(logs, l)
	}
	w.mu.Unlock()
	n := 0
	var errs []error
	for _, l := range logs {
		l.mu.Lock()
		if l.log != nil {
			ok, err := l.log.Relink()
			if ok {
				n++
			}
			errs = append(errs, err)
		}
		l.mu.Unlock()
	}
	return n, errors.Join(errs...)
}
