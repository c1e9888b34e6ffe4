package proc

import (
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOutputJoinsLinesAcrossReads writes lines in pieces, each read on
// its own before the next is written (the pipe is seen empty in
// between): a line cut by a read is handed over whole, once its end
// arrives, and lines are never handed over in pieces below maxLine.
func TestOutputJoinsLinesAcrossReads(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("z", maxLine+10)
	tests := []struct {
		name   string
		pieces []string
		want   []string
	}{
		{"a line in two reads", []string{"hello wo", "rld\n"}, []string{"hello world"}},
		{"a line in three reads", []string{"a\nb", "b", "b\nc\n"}, []string{"a", "bbb", "c"}},
		{"CRLF cut between CR and LF", []string{"x\r", "\ny\r\n"}, []string{"x", "y"}},
		{"no newline at the end", []string{"first\nsec", "ond"}, []string{"first", "second"}},
		{"long line across reads", []string{long[:1000], long[1000:] + "\nnext\n"}, []string{long[:maxLine], long[maxLine:], "next"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var rec recorder
			o := &output{onOutput: rec.onOutput}
			r, w := testPipe(t, false)
			o.wg.Add(1)
			go o.read("stdout", r)
			for _, p := range tt.pieces {
				if _, err := w.WriteString(p); err != nil {
					t.Fatal(err)
				}
				waitDrained(t, w)
			}
			w.Close()
			o.wg.Wait()
			if got := rec.get("stdout"); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", abbrev(got), abbrev(tt.want))
			}
		})
	}
}

// waitDrained returns once the pipe holds no unread byte: the reader has
// taken what was written (FIONREAD counts the pipe's bytes from either
// end).
func waitDrained(t *testing.T, w *os.File) {
	t.Helper()
	for {
		n, err := unix.IoctlGetInt(int(w.Fd()), unix.TIOCINQ) // FIONREAD
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		runtime.Gosched()
	}
}
