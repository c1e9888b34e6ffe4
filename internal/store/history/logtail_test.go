package history

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// TestLogMatchesReference writes random output (both streams, calls of
// one to thousands of lines, empty and long lines) to logs of random
// limits and checks each file against the rule, computed from all the
// entries at once: everything if it fits; otherwise the whole lines that
// fit in half the limit, the marker with the count of bytes cut, and the
// tail that TestRingKeepsWholeLastLines pins. Calls far over the
// scratch buffer, logs long over their limit and hundreds of small calls
// past it take the paths that write in pieces, that format only the
// tail, on Close, and that fold kept calls into the ring.
func TestLogMatchesReference(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	limits := []int64{0, 1, 2, 17, 100, 1000, 4096, 100_000, 1 << 20}
	for i := range 60 {
		limit := limits[i%len(limits)]
		t.Run(fmt.Sprintf("case %d limit %d", i, limit), func(t *testing.T) {
			l, err := NewLog(t.TempDir(), "job", "run", limit)
			if err != nil {
				t.Fatal(err)
			}
			var full []byte
			calls, small := rnd.IntN(40), i%3 == 0
			if small { // many calls of a few short lines: past maxPending
				calls = 100 + rnd.IntN(400)
			}
			for range calls {
				stream, lines := randomCall(rnd, small)
				if err := l.WriteLines(stream, lines); err != nil {
					t.Fatal(err)
				}
				full = appendEntries(full, stream, lines)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(l.Path())
			if err != nil {
				t.Fatal(err)
			}
			if want := wantLog(full, int(limit)); !bytes.Equal(got, want) {
				t.Fatalf("%d bytes offered: file (%d bytes)\n%.300q\nwant (%d bytes)\n%.300q", len(full), len(got), got, len(want), want)
			}
		})
	}
}

// randomCall is one WriteLines call's arguments: mostly a few lines,
// unless small sometimes thousands (over the scratch buffer) or one long
// line.
func randomCall(rnd *rand.Rand, small bool) (stream, lines string) {
	stream = []string{"stdout", "stderr"}[rnd.IntN(2)]
	n, width := 1+rnd.IntN(5), 20
	if small {
		return stream, strings.Repeat("s\n", n-1) + "s"
	}
	switch rnd.IntN(10) {
	case 0:
		n, width = 1000+rnd.IntN(10_000), 3
	case 1:
		n, width = 1, 200_000
	}
	ls := make([]string, n)
	for i := range ls {
		ls[i] = strings.Repeat(string(rune('a'+rnd.IntN(26))), rnd.IntN(width+1))
	}
	return stream, strings.Join(ls, "\n")
}

// wantLog is the reference for a log of limit bytes offered full: see
// TestLogMatchesReference.
func wantLog(full []byte, limit int) []byte {
	if limit <= 0 || len(full) <= limit {
		return full
	}
	head := bytes.LastIndexByte(full[:limit/2], '\n') + 1
	rest := full[head:]
	tail := wantTail(rest, limit-head)
	marker := fmt.Sprintf("... [cronvisor: %d bytes cut] ...\n", len(rest)-len(tail))
	return append(append(append([]byte(nil), full[:head]...), marker...), tail...)
}

// TestLogOnDiskAsItArrives: until the output is over the limit, every
// entry is on disk once its call returns, also when a call's entries
// are written in several pieces.
func TestLogOnDiskAsItArrives(t *testing.T) {
	tests := []struct {
		name  string
		limit int64
		calls []string
	}{
		{"no cap, one call of many pieces", 0, []string{strings.Repeat("y\n", 100_000) + "y"}},
		{"under the cap", 1 << 20, []string{"a", "b\nc", strings.Repeat("z", 70_000)}},
		{"a long line between short ones", 0, []string{"short", strings.Repeat("x", 200_000) + "\nafter"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := NewLog(t.TempDir(), "job", "run", tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			var want []byte
			for _, c := range tc.calls {
				if err := l.WriteLines("stdout", c); err != nil {
					t.Fatal(err)
				}
				want = appendEntries(want, "stdout", c)
				if got, err := os.ReadFile(l.Path()); err != nil || !bytes.Equal(got, want) {
					t.Fatalf("on disk: %d bytes, %v; want %d bytes", len(got), err, len(want))
				}
			}
		})
	}
}

// TestLogWriteAfterCloseAndError: a closed log refuses lines, also once
// it is over its limit (the path that keeps lines unformatted).
func TestLogWriteAfterCloseOverLimit(t *testing.T) {
	l, err := NewLog(t.TempDir(), "job", "run", 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(l.WriteLines("stdout", strings.Repeat("y\n", 1000)), l.Close()); err != nil {
		t.Fatal(err)
	}
	if err := l.WriteLines("stdout", "late"); !errors.Is(err, ErrLogClosed) {
		t.Errorf("WriteLines after Close: %v, want ErrLogClosed", err)
	}
}

// TestLogOverLimitKeepsLittle: past its limit, a log holds only the
// calls whose entries cover its tail, and at most maxPending of them,
// however much more arrives.
func TestLogOverLimitKeepsLittle(t *testing.T) {
	tests := []struct {
		name  string
		limit int64
		call  string
	}{
		{"short lines", 1000, strings.Repeat("y\n", 100) + "y"},
		{"one line a call", 1000, "y"},
		{"one line a call, a tail of thousands of lines", 64 << 10, "y"},
		{"calls longer than the tail", 100, strings.Repeat("x", 500)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := NewLog(t.TempDir(), "job", "run", tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			size := entriesSize("stdout", tc.call)
			most := min(int(tc.limit)/size+2, maxPending) // enough to cover the tail, and one over
			for i := range 10_000 {
				if err := l.WriteLines("stdout", tc.call); err != nil {
					t.Fatal(err)
				}
				if n := len(l.pending.calls); n > most {
					t.Fatalf("after %d calls of %d bytes: %d calls kept, want at most %d", i+1, size, n, most)
				}
			}
			if !l.over {
				t.Fatal("the log never went over its limit")
			}
		})
	}
}
