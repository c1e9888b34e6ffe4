package history

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// base is the reference instant of the tests: a Saturday noon, UTC.
func base() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) }

// minute is base plus m minutes.
func minute(m int) time.Time { return base().Add(time.Duration(m) * time.Minute) }

func intp(i int) *int { return &i }

// openTemp opens a new store in a temporary state dir.
func openTemp(t testing.TB, opts ...StoreOption) (*Store, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "history.db")
	s, err := Open(p, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, p
}

func testCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// utc puts every time of r in UTC, so records read back (in Local) compare
// with reflect.DeepEqual against the ones written.
func utc(r run.Record) run.Record {
	r.ScheduledAt, r.StartedAt, r.EndedAt = r.ScheduledAt.UTC(), r.StartedAt.UTC(), r.EndedAt.UTC()
	if r.Holder != nil {
		h := *r.Holder
		h.Since = h.Since.UTC()
		r.Holder = &h
	}
	return r
}

func sameRecord(t *testing.T, got, want run.Record) {
	t.Helper()
	if g, w := utc(got), utc(want); !reflect.DeepEqual(g, w) {
		t.Errorf("record differs:\n got %+v\nwant %+v", g, w)
	}
}

func runIDs(rs []run.Record) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.RunID)
	}
	return out
}

// mustSkip and mustRun write fixtures; a failure here is a broken test.
func mustSkip(t testing.TB, s *Store, r run.Record) {
	t.Helper()
	if err := s.Skip(context.Background(), r); err != nil {
		t.Fatalf("Skip(%s): %v", r.RunID, err)
	}
}

func mustRun(t testing.TB, s *Store, r run.Record) {
	t.Helper()
	if err := s.Finish(context.Background(), r); err != nil {
		t.Fatalf("Finish(%s): %v", r.RunID, err)
	}
}
