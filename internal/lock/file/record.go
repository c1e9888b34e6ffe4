package file

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"cronvisor/internal/lock"

	"golang.org/x/sys/unix"
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
func readRecord(f *os.File) (h lock.Record, ok bool, size int, err error) {
	data, err := readUpTo(f, maxRecord)
	if err != nil {
		return lock.Record{}, false, 0, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	h, ok = parseRecord(data)
	return h, ok, len(data), nil
}

// firstRead is the buffer of readUpTo's first pread: a record is a few
// hundred bytes, so one pread(2) whose short count means end of file
// reads it (io.ReadAll took two, the second to see EOF), and a 64 KiB
// buffer per acquire was most of the lock's allocations.
const firstRead = 1 << 10

// readUpTo reads at most limit bytes from the start of the regular file f.
func readUpTo(f *os.File, limit int64) ([]byte, error) {
	buf := make([]byte, firstRead)
	var n int
	err := onFD(f, func(fd int) (err error) {
		n, err = unix.Pread(fd, buf, 0)
		return err
	})
	if err != nil {
		return nil, err
	}
	if n < len(buf) { // short read of a regular file: its end
		return buf[:n], nil
	}
	return io.ReadAll(io.NewSectionReader(f, 0, limit))
}

// onFD runs call on f's descriptor, again while it fails with EINTR.
func onFD(f *os.File, call func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var cerr error
	if err := rc.Control(func(fd uintptr) {
		for cerr = call(int(fd)); cerr == unix.EINTR; cerr = call(int(fd)) {
		}
	}); err != nil {
		return err
	}
	return cerr
}

// parseRecord is readRecord's pure part.
func parseRecord(data []byte) (lock.Record, bool) {
	lines := bytes.Split(data, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		line := bytes.TrimSpace(lines[i])
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		if h, ok := decodeRecord(line); ok {
			return h, true
		}
	}
	return lock.Record{}, false
}

// writeRecord replaces the file's content, size bytes long, with h as one
// line and returns the new size. It must only be called while holding the
// lock. pwrite at offset 0 and then ftruncate (rather than the reverse) so
// that a crash in between still leaves the new record readable (see
// readRecord); the ftruncate is skipped when the new record is not shorter
// than the file, which has no tail to cut then. It does not sync: see
// Locker.Acquire and syncData. It also returns the record as encoded,
// without its newline, for the cursor journal.
func writeRecord(f *os.File, h lock.Record, size int) (int, []byte, error) {
	data, err := encodeRecord(h)
	if err != nil {
		return size, nil, fmt.Errorf("encode lock record: %w", err)
	}
	encoded := data
	data = append(data, '\n')
	if _, err := f.WriteAt(data, 0); err != nil {
		return size, nil, fmt.Errorf("write lock record: %w", err)
	}
	if len(data) < size {
		if err := f.Truncate(int64(len(data))); err != nil {
			return size, nil, fmt.Errorf("write lock record: %w", err)
		}
	}
	return len(data), encoded, nil
}

// syncData makes the record durable with fdatasync(2): the record is
// rewritten in place, so the inode's times, which fsync(2) would write
// too, are one more block write (and, on a VM, one more exit to the
// host) per run for nothing the record needs. A size change is still
// flushed: fdatasync writes the metadata needed to read the data back.
func syncData(f *os.File) error {
	if err := onFD(f, unix.Fdatasync); err != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
	}
	return nil
}
