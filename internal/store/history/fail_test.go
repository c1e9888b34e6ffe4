package history

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// TestFailingStore checks that a store that cannot write reports it from
// every write call instead of panicking. Tests run as root, where mode bits
// do not stop a write, so the failures are ones root meets too.
func TestFailingStore(t *testing.T) {
	ctx := testCtx(t)
	w, p := openTemp(t)
	// Two finished runs of a job: Prune(keep 1) has one to delete.
	mustRun(t, w, run.Record{Job: "a", RunID: "old", Outcome: run.OK, ScheduledAt: minute(-2)})
	mustRun(t, w, run.Record{Job: "a", RunID: "new", Outcome: run.OK, ScheduledAt: minute(-1)})
	stores := []struct {
		name string
		open func(t *testing.T) *Store
	}{
		{"read-only connection", func(t *testing.T) *Store {
			s, err := OpenReadOnly(p)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"closed store", func(t *testing.T) *Store {
			s, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			return s
		}},
	}
	r := run.Record{Job: "a", RunID: "r1", ScheduledAt: minute(0), StartedAt: minute(0)}
	done := r
	done.Outcome, done.EndedAt = run.OK, minute(1)
	for _, st := range stores {
		s := st.open(t)
		calls := []struct {
			name string
			call func() error
		}{
			{"Start", func() error { return s.Start(ctx, r) }},
			{"Finish", func() error { return s.Finish(ctx, done) }},
			{"Skip", func() error { return s.Skip(ctx, r) }},
			{"Prune", func() error { _, err := s.Prune(ctx, 1, 0, minute(0)); return err }},
		}
		for _, c := range calls {
			t.Run(st.name+"/"+c.name, func(t *testing.T) {
				if err := c.call(); err == nil {
					t.Errorf("%s on a %s succeeded", c.name, st.name)
				}
			})
		}
		s.Close()
	}
}

// TestDiskFull writes under a file size limit (RLIMIT_FSIZE, which binds
// root too) in a child process until the store refuses; the child prints
// the error and exits 0 rather than panicking.
func TestDiskFull(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd, sc := startHelper(ctx, t, "fsize", filepath.Join(t.TempDir(), "history.db"), "f")
	var out []string
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := cmd.Wait(); err != nil || len(out) != 1 || !strings.HasPrefix(out[0], "error: history:") {
		t.Errorf("helper: %v, output %q; want one \"error: history: ...\" line and exit 0", err, out)
	}
}

func TestOpenFails(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	notDB := filepath.Join(dir, "not.db")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("not a database ", 400)), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, path string }{
		{"path is a directory", dir},
		{"parent is a file", filepath.Join(file, "history.db")},
		{"not a database", notDB},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if s, err := Open(tc.path); err == nil {
				s.Close()
				t.Errorf("Open(%s) succeeded", tc.path)
			}
		})
	}
}
