package history

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/run"
)

// A Spool keeps on disk the writes a failing store holds, so that a
// supervisor killed during the outage loses none of them: the next process
// on the state dir adopts its spool and writes them (AdoptSpools). Its
// space is reserved when the spool is created, while the disk still has
// room: a disk that fills up later still takes the spool's writes. Each
// process has a spool file of its own, flock(2)ed while it lives; an
// unlocked one is an orphan.
//
// The file is a header (spoolMagic, a generation) and entries, each a
// length, a CRC-32C over the generation and the payload, and the payload
// (one Write as JSON). Reset starts a new generation rather than zeroing
// the file: entries of older generations fail the CRC, as does an entry
// torn by a crash, and reading stops at the first one that does.
type Spool struct {
	f    *os.File
	name string // f's path (f.Name is the name it was made under)
	gen  uint64
	used int64 // end of the last entry
	size int64 // space reserved
	// noSync leaves the entries in the page cache (durability: process):
	// the spool's promise is to the next process on the state dir, which
	// the page cache keeps; only a machine crash loses them then.
	noSync bool
}

// SpoolOption gives a Spool an optional part, at CreateSpool.
type SpoolOption func(*Spool)

// WithSpoolDurability syncs the spool's writes to disk unless d is
// run.DurabilityProcess.
func WithSpoolDurability(d run.Durability) SpoolOption {
	return func(s *Spool) { s.noSync = !d.Syncs() }
}

const (
	spoolMagic     = "cvspool1"
	spoolHeaderLen = 16
	spoolEntryHead = 8
	spoolSuffix    = ".spool"
	// SpoolSize is the space each process reserves: about DefaultMaxWaiting
	// records, the most a Writer holds.
	SpoolSize = 4 << 20
)

var spoolCRC = crc32.MakeTable(crc32.Castagnoli)

// errSpoolFull: the reserved space cannot take the entries.
var errSpoolFull = errors.New("history spool full")

// CreateSpool creates this process's spool in dir, reserving size bytes.
func CreateSpool(dir string, size int64, opts ...SpoolOption) (*Spool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("history spool: %w", err)
	}
	name := filepath.Join(dir, strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(time.Now().UnixNano(), 36)+spoolSuffix)
	// Made under a name AdoptSpools passes over, and given its name once
	// locked and headed: another process's adoption must never find a
	// spool between its creation and its lock (it would take the lock
	// and find no header).
	making := name + ".new"
	f, err := os.OpenFile(making, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("history spool: %w", err)
	}
	s := &Spool{f: f, name: name, size: size}
	for _, o := range opts {
		o(s)
	}
	fail := func(err error) (*Spool, error) {
		_ = f.Close()
		_ = os.Remove(making)
		return nil, fmt.Errorf("history spool %s: %w", name, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fail(err)
	}
	// A file system without fallocate gets a spool that grows as it is
	// written: it works until the disk is full.
	if err := unix.Fallocate(int(f.Fd()), 0, 0, size); err != nil && !errors.Is(err, unix.EOPNOTSUPP) {
		return fail(fmt.Errorf("reserving %d bytes: %w", size, err))
	}
	if err := s.writeHeader(); err != nil {
		return fail(err)
	}
	if err := os.Rename(making, name); err != nil {
		return fail(err)
	}
	if d, err := os.Open(dir); err == nil { // the new name survives a crash
		if !s.noSync {
			_ = d.Sync()
		}
		_ = d.Close()
	}
	return s, nil
}

func (s *Spool) writeHeader() error {
	var h [spoolHeaderLen]byte
	copy(h[:], spoolMagic)
	binary.LittleEndian.PutUint64(h[8:], s.gen)
	if _, err := s.f.WriteAt(h[:], 0); err != nil {
		return err
	}
	s.used = spoolHeaderLen
	return s.sync()
}

// sync makes the spool's writes durable, unless noSync.
func (s *Spool) sync() error {
	if s.noSync {
		return nil
	}
	return unix.Fdatasync(int(s.f.Fd()))
}

// Append writes ws durably after the entries already in the spool.
func (s *Spool) Append(ws []Write) error {
	var buf []byte
	for _, w := range ws {
		payload, err := json.Marshal(newSpoolEntry(w))
		if err != nil {
			return fmt.Errorf("history spool: %w", err)
		}
		var head [spoolEntryHead]byte
		binary.LittleEndian.PutUint32(head[:4], uint32(len(payload)))
		binary.LittleEndian.PutUint32(head[4:], entryCRC(s.gen, payload))
		buf = append(append(buf, head[:]...), payload...)
	}
	if s.used+int64(len(buf)) > s.size {
		return fmt.Errorf("%w: %d of %d bytes used", errSpoolFull, s.used, s.size)
	}
	if _, err := s.f.WriteAt(buf, s.used); err != nil {
		return fmt.Errorf("history spool: %w", err)
	}
	if err := s.sync(); err != nil {
		return fmt.Errorf("history spool: %w", err)
	}
	s.used += int64(len(buf))
	return nil
}

// Reset forgets every entry: their writes are in the store.
func (s *Spool) Reset() error {
	if s.used == spoolHeaderLen {
		return nil
	}
	s.gen++
	if err := s.writeHeader(); err != nil {
		return fmt.Errorf("history spool: %w", err)
	}
	return nil
}

// Close releases the spool, removing its file when it holds nothing (keep
// false); a kept file is an orphan for the next process to adopt.
func (s *Spool) Close(keep bool) error {
	if !keep {
		_ = os.Remove(s.name)
	}
	return s.f.Close()
}

func entryCRC(gen uint64, payload []byte) uint32 {
	var g [8]byte
	binary.LittleEndian.PutUint64(g[:], gen)
	return crc32.Update(crc32.Checksum(g[:], spoolCRC), spoolCRC, payload)
}

// spoolEntry is a Write as a spool entry has it: the Write, whose record
// is in the contract's JSON form, and beside it the record's cost as the
// store keeps it (the JSON form has it to the millisecond). An entry of
// a cronvisor from before the cost has no Usage.
type spoolEntry struct {
	Write
	Usage *run.Usage `json:",omitempty"`
}

func newSpoolEntry(w Write) spoolEntry {
	e := spoolEntry{Write: w}
	if w.Record.Usage != (run.Usage{}) {
		e.Usage = &w.Record.Usage
	}
	return e
}

func (e spoolEntry) write() Write {
	if e.Usage != nil {
		e.Record.Usage = *e.Usage
	}
	return e.Write
}

// readSpool returns the entries of the current generation of f.
func readSpool(f *os.File) ([]Write, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	b := make([]byte, fi.Size())
	if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(b) < spoolHeaderLen || string(b[:8]) != spoolMagic {
		return nil, fmt.Errorf("history spool %s: not a spool", f.Name())
	}
	gen := binary.LittleEndian.Uint64(b[8:16])
	var out []Write
	for off := spoolHeaderLen; off+spoolEntryHead <= len(b); {
		n := int(binary.LittleEndian.Uint32(b[off:]))
		sum := binary.LittleEndian.Uint32(b[off+4:])
		end := off + spoolEntryHead + n
		if n == 0 || end > len(b) || entryCRC(gen, b[off+spoolEntryHead:end]) != sum {
			break
		}
		var e spoolEntry
		if err := json.Unmarshal(b[off+spoolEntryHead:end], &e); err != nil {
			return out, fmt.Errorf("history spool %s: %w", f.Name(), err)
		}
		out = append(out, e.write())
		off = end
	}
	return out, nil
}

// Adopted are the orphaned spools of dead processes, locked by this one
// until their writes are in the store.
type Adopted struct {
	Writes []Write
	files  []*os.File
}

// AdoptSpools locks every orphaned spool in dir (one whose process died:
// its flock is free) and reads its writes. A spool it cannot read is left
// where it is, and its error returned beside what was adopted.
func AdoptSpools(dir string) (*Adopted, error) {
	a := &Adopted{}
	names, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return a, nil
	}
	if err != nil {
		return a, fmt.Errorf("history spool: %w", err)
	}
	var errs []error
	for _, e := range names {
		if !strings.HasSuffix(e.Name(), spoolSuffix) {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, e.Name()), os.O_RDWR, 0)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
			_ = f.Close() // its process lives, or another adopted it
			continue
		}
		ws, err := readSpool(f)
		if err != nil {
			errs = append(errs, err)
			_ = f.Close()
			continue
		}
		a.Writes = append(a.Writes, ws...)
		a.files = append(a.files, f)
	}
	return a, errors.Join(errs...)
}

// WriteTo writes the adopted writes to store in one transaction and, when
// every one is there (or can never be: see permanent), removes their
// spools and reports true.
func (a *Adopted) WriteTo(ctx context.Context, store *Store) bool {
	for _, err := range store.Apply(ctx, a.Writes) {
		if err != nil && !permanent(err) {
			return false
		}
	}
	a.Done()
	return true
}

// Done removes the adopted spools: their writes are in the store.
func (a *Adopted) Done() {
	a.Writes = nil
	for _, f := range a.files {
		_ = os.Remove(f.Name())
		_ = f.Close()
	}
	a.files = nil
}

// Release unlocks the adopted spools, keeping them for a later process.
func (a *Adopted) Release() {
	for _, f := range a.files {
		_ = f.Close()
	}
	a.files = nil
}
