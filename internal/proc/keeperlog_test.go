package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cronvisor/internal/base/run"
)

// numbered is the log entries "stdout | line NN" of ns, 17 bytes each.
func numbered(ns ...int) string {
	var b strings.Builder
	for _, n := range ns {
		fmt.Fprintf(&b, "stdout | line %02d\n", n)
	}
	return b.String()
}

func upTo(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// TestKeptLogKeepsTheLimit: a keeper that takes over a run's log where a
// dead supervisor left it ends with the log the supervisor would have
// written (history.Log: head, marked cut, tail), whatever it found.
func TestKeptLogKeepsTheLimit(t *testing.T) {
	cut := numbered(0, 1) + run.LogCutMarker(1615, false) + numbered(97, 98, 99)
	tests := []struct {
		name   string
		limit  int64
		prior  string // what the supervisor had written
		writes []int  // the lines the keeper appends
		want   string
	}{
		{"nothing before, under the limit", 1000, "", upTo(0, 2), numbered(0, 1, 2)},
		{"nothing before, cut", 100, "", upTo(0, 99), cut},
		{"the head still filling", 100, numbered(0), upTo(1, 99), cut},
		{"head and tail on disk", 100, numbered(upTo(0, 4)...), upTo(5, 99), cut},
		{"the supervisor had cut", 100, numbered(0, 1) + run.LogCutOpen, upTo(50, 99),
			numbered(0, 1) + run.LogCutMarker(799, true) + numbered(97, 98, 99)},
		{"a cut the keeper need not add to", 100, numbered(0, 1) + run.LogCutOpen, nil,
			numbered(0, 1) + run.LogCutMarker(0, true)},
		{"no limit", 0, numbered(0), upTo(1, 3), numbered(0, 1, 2, 3)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "logs", "job", "r1.log")
			if tc.prior != "" {
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tc.prior), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			l, err := openKeptLog(path, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range tc.writes {
				if err := l.writeLines("stdout", fmt.Sprintf("line %02d", n)); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.close(); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(path); string(got) != tc.want {
				t.Errorf("log:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestKeptLogMarksACutInProgress: past the limit, the file is the head
// and run.LogCutOpen until the close writes the tail, as history.Log's.
func TestKeptLogMarksACutInProgress(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r1.log")
	l, err := openKeptLog(path, 100)
	if err != nil {
		t.Fatal(err)
	}
	for n := range 10 {
		if err := l.writeLines("stdout", fmt.Sprintf("line %02d", n)); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(path); string(got) != numbered(0, 1)+run.LogCutOpen {
		t.Errorf("the log mid-run:\n%s\nwant the head and the open cut", got)
	}
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
}
