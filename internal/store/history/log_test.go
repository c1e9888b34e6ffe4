package history

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// numbered is "stdout | line-NN\n" for each n: 17 bytes a line.
func numbered(ns ...int) string {
	var b strings.Builder
	for _, n := range ns {
		fmt.Fprintf(&b, "stdout | line-%02d\n", n)
	}
	return b.String()
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func TestLogCap(t *testing.T) {
	tests := []struct {
		name  string
		limit int64
		lines int
		want  string
	}{
		{"no cap", 0, 30, numbered(seq(0, 30)...)},
		{"under the cap", 1000, 30, numbered(seq(0, 30)...)},
		{"exactly the cap", 17 * 6, 6, numbered(seq(0, 6)...)},
		// head: 2 lines (34 of 50 bytes); tail: 66 bytes = 3 lines and a
		// partial one, which is dropped: 98*17 - 3*17 bytes cut.
		{"cut", 100, 100, numbered(0, 1) + "... [cronvisor: 1615 bytes cut] ...\n" + numbered(97, 98, 99)},
		{"one line over", 17 * 6, 7, numbered(0, 1, 2) + "... [cronvisor: 17 bytes cut] ...\n" + numbered(4, 5, 6)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := NewLog(t.TempDir(), "job", "run", tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.lines {
				if err := l.Write("stdout", fmt.Sprintf("line-%02d", i)); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(l.Path())
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("file:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestLogHugeLine(t *testing.T) {
	l, err := NewLog(t.TempDir(), "job", "run", 100)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 1000)
	if err := errors.Join(l.Write("stdout", "first"), l.Write("stderr", big), l.Close()); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(l.Path())
	// Head: 15 bytes; tail: 85 bytes, the last of the 1010-byte line.
	want := "stdout | first\n... [cronvisor: 925 bytes cut] ...\n" + strings.Repeat("x", 84) + "\n"
	if string(got) != want {
		t.Errorf("file:\n%q\nwant:\n%q", got, want)
	}
}

func TestLogFormat(t *testing.T) {
	dir := t.TempDir()
	l, err := NewLog(dir, "job", "r1", 1000)
	if err != nil {
		t.Fatal(err)
	}
	writes := []struct{ stream, line string }{
		{"stdout", "plain"},
		{"stderr", "with newline\n"},
		{"stdout", "two\nlines"},
		{"stdout", ""},
	}
	for _, w := range writes {
		if err := l.Write(w.stream, w.line); err != nil {
			t.Fatal(err)
		}
	}
	want := "stdout | plain\nstderr | with newline\nstdout | two\nstdout | lines\nstdout | \n"
	t.Run("on disk before Close", func(t *testing.T) {
		got, _ := os.ReadFile(filepath.Join(dir, "logs", "job", "r1.log"))
		if string(got) != want {
			t.Errorf("file %q, want %q", got, want)
		}
	})
	t.Run("modes", func(t *testing.T) {
		for p, mode := range map[string]os.FileMode{l.Path(): 0o600, filepath.Dir(l.Path()): 0o700, filepath.Join(dir, "logs"): 0o700} {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != mode {
				t.Errorf("%s: mode %v, %v; want %v", p, fi.Mode().Perm(), err, mode)
			}
		}
	})
	t.Run("closed", func(t *testing.T) {
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if err := l.Write("stdout", "late"); !errors.Is(err, ErrLogClosed) {
			t.Errorf("Write after Close: %v, want ErrLogClosed", err)
		}
	})
	t.Run("run id reused", func(t *testing.T) {
		if _, err := NewLog(dir, "job", "r1", 0); err == nil {
			t.Error("NewLog over an existing log succeeded")
		}
	})
}

func TestLogBadNames(t *testing.T) {
	tests := []struct{ name, job, run string }{
		{"empty job", "", "r"},
		{"dot-dot job", "..", "r"},
		{"slash in run", "j", "../../etc/x"},
		{"NUL", "j", "r\x00"},
		{"empty run", "j", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewLog(t.TempDir(), tc.job, tc.run, 0); !errors.Is(err, ErrBadName) {
				t.Errorf("err = %v, want ErrBadName", err)
			}
		})
	}
}

// TestLogConcurrent writes stdout and stderr from two goroutines, with and
// without cutting; every line must come out whole and in its stream's order.
func TestLogConcurrent(t *testing.T) {
	for _, limit := range []int64{0, 4096} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			l, err := NewLog(t.TempDir(), "job", "run", limit)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for _, stream := range []string{"stdout", "stderr"} {
				wg.Go(func() {
					for i := range 2000 {
						l.Write(stream, fmt.Sprintf("%s-%04d", stream, i))
					}
				})
			}
			wg.Wait()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(l.Path())
			last := map[string]int{"stdout": -1, "stderr": -1}
			for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
				if strings.HasPrefix(line, "... [cronvisor: ") {
					continue
				}
				var stream, s2 string
				var n int
				if _, err := fmt.Sscanf(line, "%6s | %6s-%04d", &stream, &s2, &n); err != nil || stream != s2 || n <= last[stream] {
					t.Fatalf("bad or out-of-order line %q (last %v)", line, last)
				}
				last[stream] = n
			}
			// Cut or not, the stream that finished last ends the file.
			if max(last["stdout"], last["stderr"]) != 1999 || (limit == 0 && min(last["stdout"], last["stderr"]) != 1999) {
				t.Errorf("last lines %v", last)
			}
		})
	}
}

// TestRingKeepsWholeLastLines feeds the tail ring random entries (lines of
// random lengths, some entries of several lines) and checks it against
// the rule it implements: the longest suffix of whole lines that fits, or,
// when the last line alone is longer, that line's last bytes.
func TestRingKeepsWholeLastLines(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		size := 1 + rnd.IntN(80)
		r := newRing(size)
		var stream []byte
		for range rnd.IntN(40) {
			var e []byte
			for range 1 + rnd.IntN(3) {
				e = append(append(e, strings.Repeat("x", rnd.IntN(2*size))...), '\n')
			}
			r.add(e)
			stream = append(stream, e...)
		}
		if got, want := r.bytes(), wantTail(stream, size); string(got) != string(want) {
			t.Fatalf("case %d, size %d: tail %q, want %q (of %q)", i, size, got, want, stream)
		}
	}
}

// wantTail is the reference for ring: see TestRingKeepsWholeLastLines.
func wantTail(stream []byte, size int) []byte {
	if len(stream) <= size {
		return stream
	}
	start := len(stream)
	for start > 0 {
		prev := bytes.LastIndexByte(stream[:start-1], '\n') + 1 // start of the line ending at start-1
		if len(stream)-prev > size {
			break
		}
		start = prev
	}
	if start == len(stream) { // the last line alone is longer than size
		return stream[len(stream)-size:]
	}
	return stream[start:]
}

// TestLogWriteLines checks that lines written in one call are kept and cut
// exactly as when written one by one, a last empty line included.
func TestLogWriteLines(t *testing.T) {
	var text []string
	for i := range 100 {
		text = append(text, fmt.Sprintf("line-%02d", i))
	}
	tests := []struct {
		name  string
		limit int64
		lines string
		want  string
	}{
		{"cut", 100, strings.Join(text, "\n"), numbered(0, 1) + "... [cronvisor: 1615 bytes cut] ...\n" + numbered(97, 98, 99)},
		{"exactly the cap in one call", 17 * 6, strings.Join(text[:6], "\n"), numbered(seq(0, 6)...)},
		{"one line over in one call", 17 * 6, strings.Join(text[:7], "\n"), numbered(0, 1, 2) + "... [cronvisor: 17 bytes cut] ...\n" + numbered(4, 5, 6)},
		{"empty last line", 0, "a\n", "stdout | a\nstdout | \n"},
		{"one empty line", 0, "", "stdout | \n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := NewLog(t.TempDir(), "job", "run", tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if err := errors.Join(l.WriteLines("stdout", tc.lines), l.Close()); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(l.Path()); string(got) != tc.want {
				t.Errorf("file:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
