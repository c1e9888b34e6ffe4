package history

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cronvisor/internal/base/statedir"
)

func TestReadLog(t *testing.T) {
	dir := t.TempDir()
	write := func(job, run string, lines ...string) {
		t.Helper()
		p := statedir.Dir(dir).RunLog(job, run)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("x", 100)
	write("j", "whole", "stdout | a", "stderr | b")
	write("j", "big", long, long, "stdout | last")
	write("j", "empty")
	tests := []struct {
		name, job, run string
		limit          int64
		want           []string
		wantOmitted    int64
		wantErr        error
	}{
		{name: "whole", job: "j", run: "whole", limit: 1 << 10, want: []string{"stdout | a", "stderr | b"}},
		{name: "the end of a big one", job: "j", run: "big", limit: 120, want: []string{long, "stdout | last"}, wantOmitted: 101},
		{name: "empty", job: "j", run: "empty", limit: 1 << 10},
		{name: "missing", job: "j", run: "nope", limit: 1 << 10, wantErr: fs.ErrNotExist},
		{name: "a run id that climbs out", job: "j", run: "../../x", limit: 1 << 10, wantErr: ErrBadName},
		{name: "a job of ..", job: "..", run: "whole", limit: 1 << 10, wantErr: ErrBadName},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, omitted, err := ReadLog(dir, tc.job, tc.run, tc.limit)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if !slices.Equal(got, tc.want) || omitted != tc.wantOmitted {
				t.Errorf("ReadLog = %q, %d omitted; want %q, %d", got, omitted, tc.want, tc.wantOmitted)
			}
		})
	}
}

// TestOutputTailIsTheLogsLastText: the last lines within the limit,
// without their stream tags; "" for no log.
func TestOutputTailIsTheLogsLastText(t *testing.T) {
	dir := t.TempDir()
	l, err := NewLog(dir, "j", "r1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WriteLines("stdout", "one\ntwo"); err != nil {
		t.Fatal(err)
	}
	if err := l.WriteLines("stderr", "three"); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := OutputTail(l.Path(), 4096); got != "one\ntwo\nthree\n" {
		t.Errorf("OutputTail = %q; want the three lines untagged", got)
	}
	if got := OutputTail(l.Path(), int64(len("stderr"+entrySep+"three\n"))); got != "three\n" {
		t.Errorf("OutputTail within one line's bytes = %q; want the last line", got)
	}
	if got := OutputTail("", 4096); got != "" {
		t.Errorf("OutputTail of no log = %q", got)
	}
}
