package proc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"cronvisor/internal/base/run"
)

// readOutput takes over the run's pipes from the dead supervisor: their
// lines are appended to the run's log, within its log_limit, so the run
// never writes into a pipe nobody reads (it would block, or die of
// SIGPIPE). The log is closed (its cut marked, its tail written) before
// the output's finish returns.
func (k *kept) readOutput() *output {
	log, err := openKeptLog(k.f.log, k.f.logLimit)
	if err != nil {
		k.note("its output was dropped: %v", err)
	}
	o := &output{stdoutR: os.NewFile(uintptr(k.files.stdout), "stdout"), stderrR: os.NewFile(uintptr(k.files.stderr), "stderr")}
	k.files.stdout, k.files.stderr = -1, -1 // the output's now: finish closes them
	o.onOutput = func(stream, lines string) {
		if werr := log.writeLines(stream, lines); werr != nil {
			k.note("writing its log: %v; its further output was dropped", werr)
		}
	}
	var readers sync.WaitGroup
	readers.Add(2)
	o.wg.Add(3) // the two readers, and the log's close after them
	go func() { defer readers.Done(); o.read("stdout", o.stdoutR) }()
	go func() { defer readers.Done(); o.read("stderr", o.stderrR) }()
	go func() {
		defer o.wg.Done()
		readers.Wait()
		if cerr := log.close(); cerr != nil {
			k.note("closing its log: %v", cerr)
		}
	}()
	return o
}

// note keeps a line for the End's Notes. Only the output's readers (one
// at a time, see output.emit) and, after them, keep call it.
func (k *kept) note(format string, args ...any) {
	k.notes = append(k.notes, fmt.Sprintf(format, args...))
}

// keptLog is a run's log once its keeper took it over from a dead
// supervisor: lines go on as the supervisor wrote them ("STREAM | TEXT",
// history.Log), within the same limit: the head (whole lines in the
// first half of the limit), the last bytes that fit in the rest, and a
// marked cut between them. What the supervisor wrote is taken as it is
// on disk; a cut it had begun (run.LogCutOpen) lost the tail it held.
// Nil (no log) drops the lines. Calls are serialised by output.emit.
type keptLog struct {
	f       *os.File
	limit   int64 // 0: no cap
	headLen int64 // bytes of the head on disk
	headEnd bool  // the head is complete: further bytes are the tail's
	onDisk  int64
	over    bool // past the limit: the tail lives in ring only
	lost    bool // the supervisor had cut already: more was cut than counted
	ring    tailRing
	total   int64 // bytes of the tail offered, kept or cut
	err     error // the first write error: later lines are dropped
}

// openKeptLog opens path for a keeper's appends, limit bytes at most
// (the cut's marker aside), reading where the supervisor left it.
func openKeptLog(path string, limit int64) (*keptLog, error) {
	if path == "" {
		return nil, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	l := &keptLog{f: f, limit: max(limit, 0)}
	if err := l.resume(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// resume reads what is on disk: a head still filling, a head and tail
// under the limit, or a head the supervisor had cut after.
func (l *keptLog) resume() error {
	st, err := l.f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	l.onDisk, l.headLen = size, size
	open := int64(len(run.LogCutOpen))
	switch {
	case l.limit > 0 && size >= open && l.endsCut(size):
		l.headLen, l.headEnd, l.over, l.lost = size-open, true, true, true
		l.onDisk = l.headLen
		l.ring = tailRing{size: int(max(l.limit-l.headLen, 0))}
	case l.limit == 0 || size <= l.limit/2: // the head is still filling
	default: // the head is complete; the rest on disk is tail
		head := make([]byte, l.limit/2)
		if _, err := l.f.ReadAt(head, 0); err != nil && err != io.EOF {
			return err
		}
		l.headLen, l.headEnd = int64(bytes.LastIndexByte(head, '\n')+1), true
		l.ring = tailRing{size: int(l.limit - l.headLen)}
		from := max(l.headLen, size-int64(l.ring.size)-1)
		tail := make([]byte, size-from)
		if _, err := l.f.ReadAt(tail, from); err != nil && err != io.EOF {
			return err
		}
		l.ring.add(tail)
		l.total = size - l.headLen
	}
	_, err = l.f.Seek(l.onDisk, io.SeekStart)
	return err
}

// endsCut reports whether the file of size bytes ends with LogCutOpen.
func (l *keptLog) endsCut(size int64) bool {
	b := make([]byte, len(run.LogCutOpen))
	_, err := l.f.ReadAt(b, size-int64(len(b)))
	return err == nil && string(b) == run.LogCutOpen
}

// writeLines appends lines (joined by "\n"), each tagged with stream.
func (l *keptLog) writeLines(stream, lines string) error {
	if l == nil || l.err != nil {
		return nil // reported once
	}
	var b []byte
	for line := range bytes.SplitSeq([]byte(lines), []byte("\n")) {
		b = append(append(append(append(b, stream...), " | "...), line...), '\n')
	}
	l.err = l.add(b)
	return l.err
}

// add places entries in the head, on disk after it, or in the ring, as
// history.Log does.
func (l *keptLog) add(e []byte) error {
	if l.limit == 0 {
		return l.write(e)
	}
	if !l.headEnd {
		if l.headLen+int64(len(e)) <= l.limit/2 {
			l.headLen += int64(len(e))
			return l.write(e)
		}
		if fit := bytes.LastIndexByte(e[:l.limit/2-l.headLen], '\n') + 1; fit > 0 {
			l.headLen += int64(fit)
			if err := l.write(e[:fit]); err != nil {
				return err
			}
			e = e[fit:]
		}
		l.headEnd = true
		l.ring = tailRing{size: int(l.limit - l.headLen)}
	}
	l.total += int64(len(e))
	l.ring.add(e)
	if l.over {
		return nil
	}
	if l.onDisk+int64(len(e)) <= l.limit {
		return l.write(e)
	}
	l.over = true // first overflow: the head on disk, marked; the tail in the ring
	if err := l.f.Truncate(l.headLen); err != nil {
		return err
	}
	if _, err := l.f.WriteAt([]byte(run.LogCutOpen), l.headLen); err != nil {
		return err
	}
	l.onDisk = l.headLen
	return nil
}

func (l *keptLog) write(e []byte) error {
	n, err := l.f.Write(e)
	l.onDisk += int64(n)
	return err
}

// close writes the cut's marker and the tail after the head, if the
// output was cut, and closes the file.
func (l *keptLog) close() error {
	if l == nil {
		return nil
	}
	err := l.err
	if l.over && err == nil {
		tail := l.ring.bytes()
		b := append([]byte(run.LogCutMarker(l.total-int64(len(tail)), l.lost)), tail...)
		if _, err = l.f.WriteAt(b, l.headLen); err == nil {
			err = l.f.Truncate(l.headLen + int64(len(b)))
		}
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// tailRing keeps the last size bytes written to it (and one more, to
// tell whether they begin at a line's start): history.Log's ring.
type tailRing struct {
	buf  []byte
	pos  int
	size int
}

func (r *tailRing) add(p []byte) {
	keep := r.size + 1
	if len(p) >= keep {
		r.buf, r.pos = append(r.buf[:0], p[len(p)-keep:]...), 0
		return
	}
	if room := keep - len(r.buf); room > 0 {
		n := min(room, len(p))
		r.buf, p = append(r.buf, p[:n]...), p[n:]
	}
	for len(p) > 0 {
		n := copy(r.buf[r.pos:], p)
		p, r.pos = p[n:], (r.pos+n)%keep
	}
}

// bytes returns the kept bytes, oldest first, from a line's start.
func (r *tailRing) bytes() []byte {
	all := append(slices.Clone(r.buf[r.pos:]), r.buf[:r.pos]...)
	if len(all) <= r.size {
		return all
	}
	before, win := all[0], all[1:]
	if before == '\n' {
		return win
	}
	if i := bytes.IndexByte(win, '\n'); i >= 0 && i < len(win)-1 {
		return win[i+1:]
	}
	return win
}
