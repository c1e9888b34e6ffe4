package fleet

import (
	"slices"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/store/history"
)

// slotsOf is what a record of the shared history says of its slots.
type slotsOf struct {
	resources []string
	wait      time.Duration
}

// TestResourcesRoundTrip: a run's slots and its wait, and a skip's wait,
// read back from the shared history as shipped; a run's end shipped
// after its start keeps them.
func TestResourcesRoundTrip(t *testing.T) {
	url, _ := newDB(t)
	s := openStore(t, url, "a")
	held := rec("j", "held", "a", run.OK, 0)
	held.Resources, held.ResourceWait = []string{"db/0", "disk/1"}, 1500*time.Millisecond
	waited := rec("j", "waited", "a", run.Skipped, 1)
	waited.ResourceWait = time.Minute
	none := rec("j", "none", "a", run.OK, 2)
	start := held
	start.Outcome = run.Running
	if err := s.Upsert(ctxOf(t), []run.Record{start}); err != nil {
		t.Fatal(err)
	}
	if err := s.Upsert(ctxOf(t), []run.Record{held, waited, none}); err != nil {
		t.Fatal(err)
	}
	checkSlots(t, s, map[string]slotsOf{"held": {held.Resources, held.ResourceWait}, "waited": {nil, time.Minute}, "none": {}})
}

// TestResourcesOfATableFromBefore: a table of hosts from before the
// resource columns reads as no slots, and gets them at the next
// EnsureSchema.
func TestResourcesOfATableFromBefore(t *testing.T) {
	url, db := newDB(t)
	s := openStore(t, url, "a")
	if err := s.Upsert(ctxOf(t), []run.Record{rec("j", "old", "a", run.OK, 0)}); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `ALTER TABLE cronvisor_runs DROP COLUMN resources, DROP COLUMN resource_wait_ms`)
	checkSlots(t, s, map[string]slotsOf{"old": {}})

	newer := openStore(t, url, "b") // its EnsureSchema adds them again
	r := rec("j", "new", "b", run.OK, 1)
	r.Resources = []string{"db/1"}
	if err := newer.Upsert(ctxOf(t), []run.Record{r}); err != nil {
		t.Fatal(err)
	}
	checkSlots(t, s, map[string]slotsOf{"old": {}, "new": {[]string{"db/1"}, 0}})
}

func checkSlots(t *testing.T, s *Store, want map[string]slotsOf) {
	t.Helper()
	got, err := s.Query(ctxOf(t), history.Filter{})
	if err != nil || len(got) != len(want) {
		t.Fatalf("Query = %d records, %v; want %d", len(got), err, len(want))
	}
	for _, r := range got {
		if w, ok := want[r.RunID]; !ok || !slices.Equal(r.Resources, w.resources) || r.ResourceWait != w.wait {
			t.Errorf("%s: resources %q wait %v, want %+v", r.RunID, r.Resources, r.ResourceWait, w)
		}
	}
}
