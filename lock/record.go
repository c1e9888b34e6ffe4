package lock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// maxRecord bounds how much of a lock file is read: a record is a few
// hundred bytes, and a foreign program may have written anything there.
const maxRecord = 64 << 10

// readRecord returns the last line of f that decodes as a JSON record.
// Empty files and garbage are tolerated (ok is false): the file may be new,
// written by another program, or torn by a crash. Scanning back past a bad
// last line also recovers the record when a crash hit between writeRecord's
// pwrite and ftruncate, which leaves a tail of the older, longer record.
// It uses pread, so the offset it shares with the run's processes is
// untouched.
func readRecord(f *os.File) (h Holder, ok bool, err error) {
	// ReadAll grows from a small buffer: records are a few hundred bytes,
	// and a 64 KiB buffer per acquire and per inspection was most of the
	// lock's allocations.
	data, err := io.ReadAll(io.NewSectionReader(f, 0, maxRecord))
	if err != nil {
		return Holder{}, false, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	h, ok = parseRecord(data)
	return h, ok, nil
}

// parseRecord is readRecord's pure part.
func parseRecord(data []byte) (Holder, bool) {
	lines := bytes.Split(data, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		line := bytes.TrimSpace(lines[i])
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var h Holder
		if json.Unmarshal(line, &h) == nil {
			return h, true
		}
	}
	return Holder{}, false
}

// writeRecord replaces the file's content with h as one line. It must only
// be called while holding the lock. pwrite at offset 0 and then ftruncate
// (rather than the reverse) so that a crash in between still leaves the new
// record readable on the first line. durable adds an fsync: see Acquire for
// when that is worth its cost.
func writeRecord(f *os.File, h Holder, durable bool) error {
	data, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("encode lock record: %w", err)
	}
	data = append(data, '\n')
	if _, err := f.WriteAt(data, 0); err != nil {
		return fmt.Errorf("write lock record: %w", err)
	}
	if err := f.Truncate(int64(len(data))); err != nil {
		return fmt.Errorf("write lock record: %w", err)
	}
	if durable {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("sync lock record: %w", err)
		}
	}
	return nil
}
