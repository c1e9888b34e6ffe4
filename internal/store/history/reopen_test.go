package history

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"cronvisor/internal/base/run"
)

// TestDeletedOrReplacedFileIsReopened: a write after the database file was
// deleted or replaced lands in the file now at the path, not in the old
// one; a deleted file's records are copied there first.
func TestDeletedOrReplacedFileIsReopened(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(t *testing.T, p string)
	}{
		{"deleted", func(t *testing.T, p string) {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced by another database", func(t *testing.T, p string) {
			other := filepath.Join(filepath.Dir(p), "other.db")
			o, err := Open(other)
			if err != nil {
				t.Fatal(err)
			}
			o.Close()
			if err := os.Rename(other, p); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced by garbage", func(t *testing.T, p string) {
			tmp := p + ".tmp"
			if err := os.WriteFile(tmp, []byte("not a database, not at all, but long enough to be read as a header..........."), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, p); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			reopened, setAside := 0, ""
			s, p := openTemp(t, WithReopened(func(_, to string) { reopened++; setAside = to }))
			mustRun(t, s, run.Record{Job: "a", RunID: "before", Outcome: run.OK, ScheduledAt: minute(0)})
			tc.break_(t, p)
			mustRun(t, s, run.Record{Job: "a", RunID: "after", Outcome: run.OK, ScheduledAt: minute(1)})
			ro, err := OpenReadOnly(p)
			if err != nil {
				t.Fatal(err)
			}
			defer ro.Close()
			recs, err := ro.Query(ctx, Filter{})
			if err != nil {
				t.Fatal(err)
			}
			// A file deleted, or renamed over, is copied back (see
			// TestDeletedFileIsCopiedBack), or kept beside the database
			// put at the path (TestDeletedFileWithAnotherAtThePath).
			want, wantReopens := []string{"after", "before"}, 0
			switch tc.name {
			case "replaced by another database":
				want = []string{"after"}
			case "replaced by garbage":
				wantReopens = 1
			}
			if got := runIDs(recs); !slices.Equal(got, want) || reopened != wantReopens {
				t.Errorf("file at the path holds %v after %d reopens; want %v, %d reopens", got, reopened, want, wantReopens)
			}
			if _, err := os.Stat(setAside); (tc.name == "replaced by garbage") != (err == nil) {
				t.Errorf("set aside as %q (%v)", setAside, err)
			}
		})
	}
}

// TestGarbageFileIsNotDatabaseAndSetAside: a file that is no database is
// ErrNotDatabase; SetAside moves it away and a new store opens.
func TestGarbageFileIsNotDatabaseAndSetAside(t *testing.T) {
	p := filepath.Join(t.TempDir(), "history.db")
	garbage := []byte("this is not a database, just some bytes that are long enough to be a header............")
	if err := os.WriteFile(p, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(p); !errors.Is(err, ErrNotDatabase) {
		t.Fatalf("Open of garbage: %v, want ErrNotDatabase", err)
	}
	to, err := SetAside(p, base())
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(to); err != nil || string(b) != string(garbage) {
		t.Errorf("set-aside file %s: %q, %v", to, b, err)
	}
	s, err := Open(p)
	if err != nil {
		t.Fatalf("Open after SetAside: %v", err)
	}
	s.Close()
}

// TestUnopenedStoreOpensAtItsFirstWrite: reads fail until a write opens it.
func TestUnopenedStoreOpensAtItsFirstWrite(t *testing.T) {
	ctx := testCtx(t)
	s, err := Unopened(filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Query(ctx, Filter{}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Query before any write: %v, want ErrUnavailable", err)
	}
	mustRun(t, s, run.Record{Job: "a", RunID: "r", Outcome: run.OK, ScheduledAt: minute(0)})
	if recs, err := s.Query(ctx, Filter{}); err != nil || len(recs) != 1 {
		t.Errorf("Query after the write: %d records, %v", len(recs), err)
	}
}
