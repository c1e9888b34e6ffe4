package history

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
)

// Log is the output file of one run. Each line is written as
// "STREAM | TEXT", so `cat` shows stdout and stderr interleaved in the order
// they arrived and still tells them apart.
//
// With a limit, the file keeps the lines that fit in the first half of the
// limit (the head) and the last lines that fit in the rest (the tail; of a
// single line longer than that, its last bytes); what lies between is
// replaced, on Close, by one line "... [cronvisor: N bytes cut] ...". Until
// the output first exceeds the limit everything is on disk as it arrives,
// so `tail -f` works and a crash loses nothing; after that the tail is held
// in memory until Close, and the file is the head and run.LogCutOpen.
//
// Write and Close may be called from several goroutines.
type Log struct {
	mu      sync.Mutex
	f       *os.File
	path    string
	limit   int64 // 0: no cap
	headLen int64 // bytes of the head on disk
	headEnd bool  // the head is complete; later bytes are tail
	onDisk  int64 // bytes on disk (head and, before overflow, the tail too)
	over    bool  // the limit was exceeded: the tail lives only in ring and pending
	ring    ring
	pending rawTail // once over: the last lines, not yet formatted into ring
	total   int64   // bytes offered after the head
	err     error   // first write error, returned by every later call
	closed  bool
	scratch []byte // the entry being written
}

// NewLog creates the log file of a run (directories 0700, file 0600). limit
// caps its size in bytes, the cut marker aside; 0 or less: no cap. It fails
// if the file exists: run ids are unique.
func NewLog(stateDir, job, runID string, limit int64) (*Log, error) {
	for _, n := range []string{job, runID} {
		if n == "" || n == "." || n == ".." || strings.ContainsAny(n, "/\x00") {
			return nil, fmt.Errorf("%w: %q", ErrBadName, n)
		}
	}
	p := statedir.Dir(stateDir).RunLog(job, runID)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, fmt.Errorf("history: log dir: %w", err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("history: log: %w", err)
	}
	return &Log{f: f, path: p, limit: max(limit, 0)}, nil
}

// Path is the file's path, for Record.LogPath.
func (l *Log) Path() string { return l.path }

// Write appends line, tagged with its stream ("stdout", "stderr", ...). A
// trailing newline is dropped; a line holding newlines is written as
// several lines, each tagged.
func (l *Log) Write(stream, line string) error {
	return l.WriteLines(stream, strings.TrimSuffix(line, "\n"))
}

// WriteLines appends lines joined by "\n" (a run.Output's Line),
// each tagged with stream; a last empty line is one too.
func (l *Log) WriteLines(stream, lines string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrLogClosed
	}
	if l.err != nil {
		return l.err
	}
	l.err = l.addLines(stream, lines)
	return l.err
}

// addLines formats the lines as entries, a scratch buffer at a time (one
// write each), and adds them. Once the output is over the limit only
// its last bytes can still reach the file: the lines are then kept as
// they came, and only those the tail needs are formatted, on Close. A
// chatty job writes a hundred million short lines, and a cost per line
// was most of the cost of one.
func (l *Log) addLines(stream, lines string) error {
	for !l.over {
		b, rest, more := l.format(stream, lines)
		if err := l.add(b); err != nil {
			return err
		}
		if !more {
			return nil
		}
		lines = rest
	}
	n := entriesSize(stream, lines)
	l.total += int64(n)
	l.pending.add(rawLines{stream: stream, lines: lines, size: n}, l.ring.size+1)
	if len(l.pending.calls) > maxPending {
		// Calls of a line or two (a slow job past its limit) cost more
		// kept as calls than as bytes in the ring.
		l.ring.add(l.pending.entries())
		l.pending = rawTail{}
	}
	return nil
}

// maxPending is the most calls a log keeps unformatted.
const maxPending = 64

// format formats lines as entries into the scratch buffer, up to
// maxScratch bytes (at least one entry), and returns what is left.
func (l *Log) format(stream, lines string) (b []byte, rest string, more bool) {
	b = l.scratch[:0]
	defer func() {
		if cap(b) <= maxScratch {
			l.scratch = b
		}
	}()
	for {
		i := strings.IndexByte(lines, '\n')
		line := lines
		if i >= 0 {
			line = lines[:i]
		}
		if len(b) > 0 && len(b)+len(stream)+len(entrySep)+len(line)+1 > maxScratch {
			return b, lines, true
		}
		b = append(append(append(append(b, stream...), entrySep...), line...), '\n')
		if i < 0 {
			return b, "", false
		}
		lines = lines[i+1:]
	}
}

// entrySep is what separates an entry's stream from its line.
const entrySep = " | "

// maxScratch is the largest scratch buffer a Log keeps between writes,
// and the most bytes of entries written at once (but for a longer line).
const maxScratch = 64 << 10

// add places one entry in the head, on disk after it, or in the ring.
func (l *Log) add(e []byte) error {
	n := int64(len(e))
	if l.limit == 0 {
		return l.write(e)
	}
	if !l.headEnd {
		if l.headLen+n <= l.limit/2 {
			l.headLen += n
			return l.write(e)
		}
		// The lines of e that still fit end the head; the rest is tail.
		if fit := bytes.LastIndexByte(e[:l.limit/2-l.headLen], '\n') + 1; fit > 0 {
			l.headLen += int64(fit)
			if err := l.write(e[:fit]); err != nil {
				return err
			}
			e, n = e[fit:], n-int64(fit)
		}
		l.headEnd = true
		l.ring = newRing(int(l.limit - l.headLen))
	}
	l.total += n
	l.ring.add(e)
	if l.over {
		return nil
	}
	if l.onDisk+n <= l.limit {
		return l.write(e)
	}
	// First overflow: keep only the head on disk; the ring has the tail.
	l.over = true
	if err := l.f.Truncate(l.headLen); err != nil {
		return fmt.Errorf("history: log: %w", err)
	}
	if _, err := l.f.Seek(l.headLen, 0); err != nil {
		return fmt.Errorf("history: log: %w", err)
	}
	l.onDisk = l.headLen
	// Marked on disk: a reader (and a keeper taking the log over) sees
	// the head is all that is there, and why.
	if _, err := l.f.WriteString(run.LogCutOpen); err != nil {
		return fmt.Errorf("history: log: %w", err)
	}
	return nil
}

func (l *Log) write(e []byte) error {
	if _, err := l.f.Write(e); err != nil {
		return fmt.Errorf("history: log: %w", err)
	}
	l.onDisk += int64(len(e))
	return nil
}

// writeCut writes the cut's marker and the tail over LogCutOpen, right
// after the head.
func (l *Log) writeCut(b []byte) error {
	if _, err := l.f.WriteAt(b, l.headLen); err != nil {
		return err
	}
	return l.f.Truncate(l.headLen + int64(len(b)))
}

// Close writes the marker and the tail if output was cut, and closes the
// file. It returns the first error of any Write or of its own; a second
// Close returns nil.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	err := l.err
	if l.over && err == nil {
		l.ring.add(l.pending.entries())
		tail := l.ring.bytes()
		marker := run.LogCutMarker(l.total-int64(len(tail)), false)
		if werr := l.writeCut(append([]byte(marker), tail...)); werr != nil {
			err = fmt.Errorf("history: log: %w", werr)
		}
	}
	if cerr := l.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("history: log: %w", cerr)
	}
	return err
}
