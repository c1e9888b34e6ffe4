package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLoggerUnderJournald: with stderr the stream JOURNAL_STREAM names,
// auto picks text and leaves the timestamp to journald; elsewhere text
// keeps it.
func TestLoggerUnderJournald(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "journal"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, stream, format string
		wantTime, wantJSON   bool
	}{
		{"journal, auto", fmt.Sprintf("%d:%d", st.Dev, st.Ino), "auto", false, false},
		{"journal, text", fmt.Sprintf("%d:%d", st.Dev, st.Ino), "text", false, false},
		{"another stream, text", fmt.Sprintf("%d:%d", st.Dev, st.Ino+1), "text", true, false},
		{"another stream, auto", "", "auto", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("JOURNAL_STREAM", tt.stream)
			if _, err := f.Seek(0, 0); err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(0); err != nil {
				t.Fatal(err)
			}
			log, err := newLogger(&globals{stderr: f}, tt.format)
			if err != nil {
				t.Fatal(err)
			}
			log.Info("hello", "job", "a")
			data, err := os.ReadFile(f.Name())
			if err != nil {
				t.Fatal(err)
			}
			line := string(data)
			hasTime := strings.Contains(line, "time=") || strings.Contains(line, `"time":`)
			if hasTime != tt.wantTime || strings.HasPrefix(line, "{") != tt.wantJSON || !strings.Contains(line, "hello") {
				t.Errorf("logged %q: time %v (want %v), JSON %v (want %v)", line, hasTime, tt.wantTime, strings.HasPrefix(line, "{"), tt.wantJSON)
			}
		})
	}
}
