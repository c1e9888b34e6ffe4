package file

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/statedir"
	"cronvisor/internal/lock"
)

// A cursorJournal makes the records that carry new slot cursors durable
// in groups (durability: machine). Each such record is written to its
// lock file first, as without a journal, and then appended to this
// process's journal; one fdatasync of the journal makes every record
// appended meanwhile durable, where each lock file took one of its own
// (a flush of the disk's cache per fire). The lock files themselves are
// left to the page cache while the process lives, which every reader
// shares; only a machine crash can leave a lock file older than the
// journal, and the next process to take locks on the state dir puts the
// journal's newer records back into them (Locker.Replay) before anyone
// reads them for a recovery or a slot check.
//
// Each process has a journal of its own, flock(2)ed while it lives (an
// unlocked one is an orphan, as a history spool is): several supervisors
// may share a state dir. A line is "CRC NAME RECORD\n", CRC the CRC-32C of
// "NAME RECORD" in 8 hex digits, so that a line torn by a crash is known
// and skipped. The file is made at its full size, zeros after the lines;
// once full it is rewritten with the newest line of each lock, under
// another name and renamed over it.
//
// A journal that cannot be written (a state dir read-only but for
// locks/, a full disk) is not tried again for retryAfter: meanwhile
// Append answers at once and each record is synced through its own lock
// file, as without a journal. The failure is logged once per try, the
// recovery once.
type cursorJournal struct {
	dir         string
	sync        func(*os.File) error // syncData; a test counts the syncs
	minCapacity int64                // defaultCapacity; a test lowers it
	log         *slog.Logger         // nil: nothing logged
	now         func() time.Time     // time.Now; a test moves it
	retryAfter  time.Duration

	mu       sync.Mutex
	queue    []byte       // lines appended, not written yet
	waiters  []chan error // one per line of queue, told once it is durable
	flushing bool         // a flusher goroutine owns the file
	closed   bool
	down     error     // the last write's failure; nil while the journal works
	downTill time.Time // no write is tried before it while down
	flusher  sync.WaitGroup

	// Only the flusher (and Close, after it) touches these.
	f        *os.File
	path     string
	size     int64 // the end of the lines written
	capacity int64 // the file's size, zeros beyond size
}

// defaultCapacity is a journal file's size (a few thousand fires'
// lines), or twice its locks' newest lines if more: once full, it is
// rewritten with each lock's newest line.
const defaultCapacity = 1 << 20

const journalSuffix = ".journal"

var journalCRC = crc32.MakeTable(crc32.Castagnoli)

// retryAfter is how long a journal that failed is left alone: each
// record meanwhile costs its own sync, and each try one log line.
const retryAfter = time.Minute

var errJournalClosed = errors.New("cursor journal closed")

func newCursorJournal(dir string) *cursorJournal {
	return &cursorJournal{dir: dir, sync: syncData, minCapacity: defaultCapacity, now: time.Now, retryAfter: retryAfter}
}

// journalLine is the line for lock name's record, as encodeRecord wrote it.
func journalLine(name string, rec []byte) []byte {
	body := make([]byte, 0, len(name)+1+len(rec))
	body = append(append(append(body, name...), ' '), rec...)
	line := make([]byte, 0, 9+len(body)+1)
	line = fmt.Appendf(line, "%08x ", crc32.Checksum(body, journalCRC))
	return append(append(line, body...), '\n')
}

// parseJournalLine is journalLine's inverse; ok is false for a line torn
// by a crash or otherwise damaged.
func parseJournalLine(line []byte) (name string, h lock.Record, ok bool) {
	if len(line) < 10 || line[8] != ' ' {
		return "", lock.Record{}, false
	}
	sum, err := strconv.ParseUint(string(line[:8]), 16, 32)
	body := line[9:]
	if err != nil || uint32(sum) != crc32.Checksum(body, journalCRC) {
		return "", lock.Record{}, false
	}
	for i, c := range body {
		if c == ' ' {
			h, ok = decodeRecord(body[i+1:])
			return string(body[:i]), h, ok && lock.CheckName(string(body[:i])) == nil
		}
	}
	return "", lock.Record{}, false
}

// Append queues lock name's record (as encodeRecord wrote it) and returns
// a channel that says once it is durable (nil) or could not be made so.
// Lines appended while a sync runs share the next one.
func (j *cursorJournal) Append(name string, record []byte) <-chan error {
	done := make(chan error, 1)
	line := journalLine(name, record)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		done <- errJournalClosed
		return done
	}
	if err := j.pausedLocked(); err != nil {
		done <- err
		return done
	}
	j.queue = append(j.queue, line...)
	j.waiters = append(j.waiters, done)
	if !j.flushing {
		j.flushing = true
		j.flusher.Add(1)
		go j.flush()
	}
	return done
}

// flush writes and syncs what is queued, round after round, and returns
// when the queue is empty: an idle journal has no goroutine.
func (j *cursorJournal) flush() {
	defer j.flusher.Done()
	for {
		j.mu.Lock()
		batch, waiters := j.queue, j.waiters
		j.queue, j.waiters = nil, nil
		if len(batch) == 0 {
			j.flushing = false
			j.mu.Unlock()
			return
		}
		// Lines queued while a failing write ran are not tried again
		// before the pause is over.
		err := j.pausedLocked()
		j.mu.Unlock()
		if err == nil {
			err = j.write(batch)
			j.judge(err)
		}
		for _, w := range waiters {
			w <- err
		}
	}
}

// pausedLocked is the failure that keeps the journal from being tried,
// nil once its pause is over (or without one). j.mu is held.
func (j *cursorJournal) pausedLocked() error {
	if j.down != nil && j.now().Before(j.downTill) {
		return j.down
	}
	return nil
}

// judge takes a write's outcome: a failure puts the journal down for
// retryAfter, a success after one brings it back; each is logged.
func (j *cursorJournal) judge(err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	was := j.down
	if err == nil {
		j.down = nil
		if was != nil && j.log != nil {
			j.log.Info("locks: cursor journal written again; slot cursors are synced in groups once more", "dir", j.dir)
		}
		return
	}
	j.down, j.downTill = err, j.now().Add(j.retryAfter)
	if j.log != nil {
		j.log.Warn("locks: cursor journal cannot be written; each new slot cursor is synced in its own lock file (slower, as durable) until a try succeeds",
			"dir", j.dir, "err", err, "next_try_in", j.retryAfter)
	}
}

// write puts batch at the journal's end and syncs it; a batch that does
// not fit (or the first) starts a new file instead.
func (j *cursorJournal) write(batch []byte) error {
	if j.f == nil || j.size+int64(len(batch)) > j.capacity {
		return j.rewrite(batch)
	}
	if _, err := j.f.WriteAt(batch, j.size); err != nil {
		return fmt.Errorf("cursor journal: %w", err)
	}
	j.size += int64(len(batch))
	if err := j.sync(j.f); err != nil {
		return fmt.Errorf("cursor journal: %w", err)
	}
	return nil
}

// rewrite replaces the journal by a new file that holds the newest line
// of each lock among those written and batch's, and zeros to its
// capacity, synced before it takes the journal's name. The zeros are
// what make an append cheap: it overwrites blocks already written, so
// its fdatasync writes no metadata (an append that grew the file would
// commit the file system's journal every time). A line torn by a crash,
// or the zeros, fail the CRC. The lines are read back from the file,
// not kept in memory: a rewrite comes once in thousands of fires.
func (j *cursorJournal) rewrite(batch []byte) error {
	var written []byte
	if j.f != nil {
		written = make([]byte, j.size)
		if _, err := j.f.ReadAt(written, 0); err != nil {
			return fmt.Errorf("cursor journal: %w", err)
		}
	}
	lines := newestLines(written, batch)
	capacity := max(j.minCapacity, 2*int64(len(lines)))
	f, path, err := createJournal(j.dir, j.path, func(tmp *os.File) error {
		content := make([]byte, capacity)
		copy(content, lines)
		if _, err := tmp.WriteAt(content, 0); err != nil {
			return err
		}
		return j.sync(tmp)
	})
	if err != nil {
		return err
	}
	if j.f != nil {
		j.f.Close()
	}
	j.f, j.path, j.size, j.capacity = f, path, int64(len(lines)), capacity
	return nil
}

// newestLines is the last line of each lock name in the journal lines
// given (each chunk whole lines, the later chunks newer), in the order
// those lines came.
func newestLines(chunks ...[]byte) []byte {
	last := map[string]int{} // name → index in all
	var all [][]byte
	for _, chunk := range chunks {
		for len(chunk) > 0 {
			end := bytes.IndexByte(chunk, '\n')
			if end < 0 {
				break
			}
			line := chunk[:end+1]
			chunk = chunk[end+1:]
			if name, ok := lineName(line); ok {
				last[name] = len(all)
				all = append(all, line)
			}
		}
	}
	var out []byte
	for i, line := range all {
		if name, _ := lineName(line); last[name] == i {
			out = append(out, line...)
		}
	}
	return out
}

// lineName is the lock name of a journal line written by journalLine.
func lineName(line []byte) (string, bool) {
	if len(line) < 10 || line[8] != ' ' {
		return "", false
	}
	name, _, ok := bytes.Cut(line[9:], []byte(" "))
	return string(name), ok
}

// createJournal makes a journal in dir, filled by fill and flocked, under
// a name Replay passes over until it is filled: the file then takes the
// name path (a new one if "") and the directory entry is made durable.
func createJournal(dir, path string, fill func(*os.File) error) (*os.File, string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("cursor journal: %w", err)
	}
	base := strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	tmp := filepath.Join(dir, "."+base+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, "", fmt.Errorf("cursor journal: %w", err)
	}
	if path == "" {
		path = filepath.Join(dir, base+journalSuffix)
	}
	locked, err := tryFlock(f, unix.LOCK_EX)
	if err == nil && !locked { // a replay of another process took it first
		err = errors.New("taken by another process")
	}
	if err == nil {
		err = fill(f)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = statedir.SyncDir(dir)
	}
	if err != nil {
		f.Close()
		_ = os.Remove(tmp)
		return nil, "", fmt.Errorf("cursor journal: %w", err)
	}
	return f, path, nil
}

// Close waits for the lines queued to be durable and closes the journal.
// The file stays: until the next process replays it, it is what makes the
// lock files' last records durable.
func (j *cursorJournal) Close() error {
	j.mu.Lock()
	j.closed = true
	j.mu.Unlock()
	j.flusher.Wait()
	if j.f == nil {
		return nil
	}
	return j.f.Close()
}
