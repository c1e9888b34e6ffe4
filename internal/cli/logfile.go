package cli

import (
	"fmt"
	"os"
	"sync"
)

// consoleLogCap is the size at which an embedded console's cronvisor.log
// is rotated: at most twice this is on disk (the log and cronvisor.log.1).
const consoleLogCap = 10 << 20

// cappedLog is an append-only log file with a size cap: a write that would
// take it past max first renames it to PATH.1 (replacing the previous one)
// and starts a new file. Rotation happens in Write, without a goroutine
// (lumberjack, the usual library, starts one it never stops). A write
// larger than max still goes out whole, into a fresh file.
type cappedLog struct {
	path string
	max  int64

	mu   sync.Mutex
	f    *os.File
	size int64
}

// openCappedLog opens path for appending under a cap of max bytes.
func openCappedLog(path string, max int64) (*cappedLog, error) {
	l := &cappedLog{path: path, max: max}
	if err := l.open(os.O_APPEND); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *cappedLog) open(mode int) error {
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|mode, 0o600)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	l.f, l.size = f, st.Size()
	return nil
}

// Write appends p, rotating first when p would not fit under the cap. A
// failed rotation keeps writing to the current file: a log over its cap
// is better than lost log lines.
func (l *cappedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.size > 0 && l.size+int64(len(p)) > l.max {
		_ = l.rotate()
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

// rotate moves the log to PATH.1 and starts an empty one; l.mu held. On
// failure l.f is still the file it was.
func (l *cappedLog) rotate() error {
	if err := os.Rename(l.path, l.path+".1"); err != nil {
		return fmt.Errorf("rotating %s: %w", l.path, err)
	}
	old := l.f
	if err := l.open(os.O_TRUNC); err != nil {
		l.f = old
		return fmt.Errorf("rotating %s: %w", l.path, err)
	}
	return old.Close()
}

// Close closes the current file.
func (l *cappedLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}
