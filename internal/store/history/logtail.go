package history

import (
	"bytes"
	"slices"
	"strings"
)

// rawLines is one WriteLines call's lines as they came, and the size of
// their entries.
type rawLines struct {
	stream, lines string
	size          int
}

// rawTail keeps, once a log is over its limit, the last calls' lines
// unformatted: just enough of them for their entries to cover the tail
// (keep bytes), older ones dropped. Keeping a string costs nothing (it
// is immutable, and already a copy of the reader's buffer); formatting
// every line of a chatty job, only for all but the last to be dropped,
// was most of the cost of its output.
type rawTail struct {
	calls []rawLines // oldest first
	size  int        // bytes of their entries
}

func (t *rawTail) add(r rawLines, keep int) {
	t.calls = append(t.calls, r)
	t.size += r.size
	drop := 0
	for t.size-t.calls[drop].size >= keep { // the rest still covers keep
		t.size -= t.calls[drop].size
		drop++
	}
	if drop > 0 {
		clear(t.calls[:drop]) // let the strings go
		t.calls = t.calls[drop:]
	}
}

// entries formats the kept lines, oldest first.
func (t *rawTail) entries() []byte {
	b := make([]byte, 0, t.size)
	for _, r := range t.calls {
		b = appendEntries(b, r.stream, r.lines)
	}
	return b
}

// appendEntries appends lines (joined by "\n") as entries "STREAM | LINE\n".
func appendEntries(b []byte, stream, lines string) []byte {
	for {
		i := strings.IndexByte(lines, '\n')
		b = append(append(b, stream...), entrySep...)
		if i < 0 {
			return append(append(b, lines...), '\n')
		}
		b = append(b, lines[:i+1]...)
		lines = lines[i+1:]
	}
}

// entriesSize is the size of the entries of lines: each line tagged and
// ended by "\n".
func entriesSize(stream, lines string) int {
	return len(lines) + 1 + (strings.Count(lines, "\n")+1)*(len(stream)+len(entrySep))
}

// ring keeps the last bytes of the tail: size of them, and the one before,
// which tells whether they start at a line start. bytes trims them to
// whole lines, unless they lie in a single line longer than size, whose
// last bytes are kept. It grows as bytes arrive, so a run with little
// output never allocates the whole tail, and copies bytes rather than
// keeping a slice per line, so a job printing millions of short lines
// costs no allocation per line.
type ring struct {
	buf  []byte // up to size+1 bytes; once full, the oldest is at pos
	pos  int
	size int
}

func newRing(size int) ring { return ring{size: size} }

func (r *ring) add(p []byte) {
	keep := r.size + 1
	if len(p) >= keep {
		r.buf = append(r.buf[:0], p[len(p)-keep:]...)
		r.pos = 0
		return
	}
	if room := keep - len(r.buf); room > 0 {
		n := min(room, len(p))
		r.buf = append(r.buf, p[:n]...)
		p = p[n:]
	}
	for len(p) > 0 {
		n := copy(r.buf[r.pos:], p)
		p = p[n:]
		r.pos = (r.pos + n) % keep
	}
}

// bytes returns the kept bytes, oldest first, from a line start.
func (r *ring) bytes() []byte {
	all := append(slices.Clone(r.buf[r.pos:]), r.buf[:r.pos]...)
	if len(all) <= r.size {
		return all // all of the tail: it starts with an entry
	}
	before, win := all[0], all[1:]
	if before == '\n' {
		return win
	}
	if i := bytes.IndexByte(win, '\n'); i >= 0 && i < len(win)-1 {
		return win[i+1:]
	}
	return win // within one line longer than the tail
}
