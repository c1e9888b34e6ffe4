package testlog

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestBufferConcurrentWrites: writes from many goroutines all land, whole,
// while a reader reads (go test -race checks the locking).
func TestBufferConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				fmt.Fprintf(&b, "g%d line %d\n", g, i)
			}
		})
	}
	for range 10 {
		_ = b.Lines()
	}
	wg.Wait()
	lines := b.Lines()
	if len(lines) != 8*50 {
		t.Fatalf("%d lines, want %d", len(lines), 8*50)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "g") || !strings.Contains(l, " line ") {
			t.Fatalf("line %q is not one whole write", l)
		}
	}
}

func TestLines(t *testing.T) {
	for _, tc := range []struct {
		name, written string
		want          []string
	}{
		{"empty", "", nil},
		{"one ended", "a\n", []string{"a"}},
		{"last unended", "a\nb", []string{"a", "b"}},
		{"blank line kept", "a\n\nb\n", []string{"a", "", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b Buffer
			_, _ = b.Write([]byte(tc.written))
			if got := b.Lines(); !slices.Equal(got, tc.want) {
				t.Errorf("Lines() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLogger(t *testing.T) {
	var b Buffer
	log := b.Logger()
	log.Debug("hidden")
	log.Warn("disk full", "job", "a")
	lines := b.Lines()
	if len(lines) != 1 || !strings.Contains(lines[0], "level=WARN") || !strings.Contains(lines[0], `msg="disk full" job=a`) {
		t.Errorf("logged %q, want one text WARN record with its attribute", lines)
	}
}
