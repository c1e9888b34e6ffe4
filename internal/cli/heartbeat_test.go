package cli

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestHeartbeatWritesOneBeat: inside a run (the variable names a pipe)
// one beat line is written; outside one the command exits 1 naming the
// variable.
func TestHeartbeatWritesOneBeat(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	pipeFD := strconv.Itoa(int(w.Fd()))
	for _, c := range []struct{ name, fd, progress, line, err string }{
		{"a beat", pipeFD, "", "beat\n", ""},
		{"progress", pipeFD, "3/10 files\nmore", "beat 3/10 files more\n", ""},
		{"unset", "", "", "", "CRONVISOR_HEARTBEAT_FD is not set"},
		{"not a number", "x", "", "", `CRONVISOR_HEARTBEAT_FD="x" is not a descriptor`},
		{"stdout", "1", "", "", "is not a descriptor above 2"},
		{"not a pipe", strconv.Itoa(int(file.Fd())), "", "", "is not the run's heartbeat pipe"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := beat(c.fd, c.progress)
			if c.err != "" {
				var ee *ExitError
				if !errors.As(err, &ee) || ee.Code != 1 || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("beat(%q) = %v, want exit 1 saying %q", c.fd, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 512)
			n, err := r.Read(buf)
			if err != nil || string(buf[:n]) != c.line {
				t.Errorf("the pipe read %q (%v), want %q", buf[:n], err, c.line)
			}
		})
	}
}
