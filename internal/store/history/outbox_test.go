package history

import (
	"os"
	"slices"
	"testing"

	"cronvisor/internal/base/run"
)

// pendingIDs is the run ids Pending returns, and the last row it read.
func pendingIDs(t *testing.T, s *Store) ([]string, int64) {
	t.Helper()
	ships, last, err := s.Pending(testCtx(t), 1000)
	if err != nil {
		t.Fatalf("Pending: %v", err)
	}
	ids := []string{}
	for _, sh := range ships {
		ids = append(ids, sh.Record.RunID)
	}
	return ids, last
}

func startRec(id string, m int) run.Record {
	return run.Record{Job: "j", RunID: id, ScheduledAt: minute(m), StartedAt: minute(m), Host: "h"}
}

func TestOutbox(t *testing.T) {
	cases := []struct {
		name string
		// before writes with shipping off, then toggles, then after.
		steps func(t *testing.T, s *Store)
		want  []string
	}{
		{"off: nothing is queued", func(t *testing.T, s *Store) {
			mustStart(t, s, startRec("a", 1))
		}, []string{}},
		{"on: the past is queued once, then each write", func(t *testing.T, s *Store) {
			mustStart(t, s, startRec("a", 1))
			mustShip(t, s, true)
			mustShip(t, s, true) // again: no second copy of the past
			mustStart(t, s, startRec("b", 2))
			r := startRec("b", 2)
			r.Outcome, r.EndedAt = run.OK, minute(3)
			if err := s.Finish(testCtx(t), r); err != nil {
				t.Fatal(err)
			}
		}, []string{"a", "b"}},
		{"off again: the outbox is emptied and stays empty", func(t *testing.T, s *Store) {
			mustShip(t, s, true)
			mustStart(t, s, startRec("a", 1))
			mustShip(t, s, false)
			mustStart(t, s, startRec("b", 2))
		}, []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTemp(t)
			tc.steps(t, s)
			if got, _ := pendingIDs(t, s); !slices.Equal(got, tc.want) {
				t.Errorf("pending %v, want %v", got, tc.want)
			}
		})
	}
}

// Pending gives each run once, as it is now; Shipped removes the rows
// read, and only those.
func TestOutboxShipped(t *testing.T) {
	s, _ := openTemp(t)
	mustShip(t, s, true)
	mustStart(t, s, startRec("a", 1))
	r := startRec("a", 1)
	r.Outcome, r.EndedAt = run.Failed, minute(2)
	if err := s.Finish(testCtx(t), r); err != nil {
		t.Fatal(err)
	}
	ships, last, err := s.Pending(testCtx(t), 10)
	if err != nil || len(ships) != 1 || ships[0].Record.Outcome != run.Failed || ships[0].Seq != last {
		t.Fatalf("Pending = %+v, %d, %v; want run a, failed, once", ships, last, err)
	}
	mustStart(t, s, startRec("b", 3)) // after the read: stays
	if err := s.Shipped(testCtx(t), last); err != nil {
		t.Fatal(err)
	}
	if got, _ := pendingIDs(t, s); !slices.Equal(got, []string{"b"}) {
		t.Errorf("pending after Shipped %v, want [b]", got)
	}
	if n, err := s.Outbox(testCtx(t)); n != 1 || err != nil {
		t.Errorf("Outbox = %d, %v; want 1", n, err)
	}
}

// A database file replaced under a shipping store gets the triggers too.
func TestOutboxReopened(t *testing.T) {
	s, path := openTemp(t)
	mustShip(t, s, true)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	mustStart(t, s, startRec("a", 1))
	if got, _ := pendingIDs(t, s); !slices.Equal(got, []string{"a"}) {
		t.Errorf("pending %v, want [a]", got)
	}
}

func mustStart(t *testing.T, s *Store, r run.Record) {
	t.Helper()
	if err := s.Start(testCtx(t), r); err != nil {
		t.Fatalf("Start: %v", err)
	}
}

func mustShip(t *testing.T, s *Store, on bool) {
	t.Helper()
	if err := s.SetShipping(testCtx(t), on); err != nil {
		t.Fatalf("SetShipping(%v): %v", on, err)
	}
}
