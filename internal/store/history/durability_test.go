package history

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"cronvisor/internal/base/run"
)

// synchronousOf reads PRAGMA synchronous on every connection of the
// store's pool at once (0 OFF, 2 FULL): the pragma is per connection.
func synchronousOf(t *testing.T, s *Store) []int {
	t.Helper()
	h := s.h.Load()
	if h == nil {
		t.Fatal("store not open")
	}
	ctx := testCtx(t)
	var got []int
	var conns []*sql.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 4 { // SetMaxOpenConns: each held, so the next is another
		c, err := h.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var v int
		if err := c.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	return got
}

// TestDurabilitySynchronous (issue 29): a store opens every connection
// synchronous=FULL unless told durability: process, then OFF; a store
// that opens later (Unopened) or reopens a deleted file keeps its mode.
func TestDurabilitySynchronous(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []StoreOption
		want int
	}{
		{"default", nil, 2},
		{"machine", []StoreOption{WithDurability(run.DurabilityMachine)}, 2},
		{"process", []StoreOption{WithDurability(run.DurabilityProcess)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check := func(when string, s *Store) {
				for i, v := range synchronousOf(t, s) {
					if v != tc.want {
						t.Errorf("%s: connection %d: synchronous = %d, want %d", when, i, v, tc.want)
					}
				}
			}
			s, p := openTemp(t, tc.opts...)
			check("opened", s)
			if got := s.Durability().Syncs(); got != (tc.want == 2) {
				t.Errorf("Durability() = %s", s.Durability())
			}
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			mustRun(t, s, run.Record{Job: "a", RunID: "after", Outcome: run.OK, ScheduledAt: minute(1)})
			check("reopened", s)

			later, err := Unopened(filepath.Join(t.TempDir(), "h.db"), tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer later.Close()
			if err := later.Writable(); err != nil {
				t.Fatal(err)
			}
			check("opened at its first write", later)
		})
	}
}
