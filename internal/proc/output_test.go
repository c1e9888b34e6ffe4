package proc

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOutputLines reads each case from a non-blocking pipe (the
// supervisor's, read through the runtime's poller) and from a blocking
// one (as a keeper could be handed).
func TestOutputLines(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 2*maxLine+5)
	tests := []struct {
		name  string
		write string
		want  []string
	}{
		{"lines", "a\nb\n", []string{"a", "b"}},
		{"CRLF", "a\r\nb\r\n", []string{"a", "b"}},
		{"lone CR is kept", "a\rb\n", []string{"a\rb"}},
		{"unterminated", "a\nb", []string{"a", "b"}},
		{"long line in pieces", long + "\n", []string{long[:maxLine], long[maxLine : 2*maxLine], long[2*maxLine:]}},
		{"nothing", "", nil},
	}
	for _, tt := range tests {
		for _, blocking := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/blocking=%v", tt.name, blocking), func(t *testing.T) {
				t.Parallel()
				var rec recorder
				o := &output{onOutput: rec.onOutput}
				r, w := testPipe(t, blocking)
				o.wg.Add(1)
				go o.read("stdout", r)
				if _, err := w.WriteString(tt.write); err != nil {
					t.Fatal(err)
				}
				w.Close()
				o.wg.Wait()
				if got := rec.get("stdout"); !slices.Equal(got, tt.want) {
					t.Errorf("got %q, want %q", abbrev(got), abbrev(tt.want))
				}
			})
		}
	}
}

// testPipe is a pipe whose read end is non-blocking (as newOutput makes
// it) or blocking; the test closes the read end.
func testPipe(t *testing.T, blocking bool) (r, w *os.File) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	if err := unix.SetNonblock(p[0], !blocking); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(p[0]), "r"), os.NewFile(uintptr(p[1]), "w")
	t.Cleanup(func() { r.Close() })
	return r, w
}

// TestOutputChunks checks that lines read at once are handed over in one
// call: a chatty job must not cost a call (an event) per line.
func TestOutputChunks(t *testing.T) {
	t.Parallel()
	var rec recorder
	o := &output{onOutput: rec.onOutput}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// 30,000 bytes fit in the pipe: written before the reader starts,
	// they are there for its first read.
	if _, err := w.WriteString(strings.Repeat("y\n", 10000) + "\nlast"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	o.wg.Add(1)
	o.read("stdout", r)
	want := append(slices.Repeat([]string{"y"}, 10000), "", "last")
	if got := rec.get("stdout"); !slices.Equal(got, want) {
		t.Errorf("got %d lines, want %d: %q", len(got), len(want), abbrev(got[len(got)-3:]))
	}
	if rec.calls > 2 {
		t.Errorf("%d calls for one read's lines, want at most 2", rec.calls)
	}
}

// TestOutputFinishCutsOff checks that finish returns although a writer
// still holds the pipe open, and that the partial line it wrote is kept.
func TestOutputFinishCutsOff(t *testing.T) {
	t.Parallel()
	var rec recorder
	o, err := newOutput(rec.onOutput)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := dupCloexec(o.stderrW.Fd()) // plays the orphan that keeps stderr open
	if err != nil {
		t.Fatal(err)
	}
	orphan := os.NewFile(uintptr(fd), "orphan")
	defer orphan.Close()
	o.start()
	if _, err := orphan.WriteString("done\npartial"); err != nil {
		t.Fatal(err)
	}
	o.finish()
	if got, want := rec.get("stderr"), []string{"done", "partial"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
