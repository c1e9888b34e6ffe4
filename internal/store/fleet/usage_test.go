package fleet

import (
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/store/history"
)

// TestUsageRoundTrip: a run's cost reads back from the shared history as
// it was shipped, to the microsecond, and unmeasured as unmeasured.
func TestUsageRoundTrip(t *testing.T) {
	url, _ := newDB(t)
	s := openStore(t, url, "a")
	measured := rec("j", "measured", "a", run.Failed, 0)
	measured.Usage = run.Usage{Measured: true, CPUUser: 520123 * time.Microsecond, CPUSystem: 31 * time.Microsecond,
		MemoryPeak: 120 << 20, OOMKilled: true}
	noMemory := rec("j", "no memory", "a", run.OK, 1)
	noMemory.Usage = run.Usage{Measured: true, CPUSystem: time.Millisecond}
	unmeasured := rec("j", "unmeasured", "a", run.OK, 2)
	// A running record shipped first, then its end with the cost.
	if err := s.Upsert(ctxOf(t), []run.Record{rec("j", "measured", "a", run.Running, 0)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Upsert(ctxOf(t), []run.Record{measured, noMemory, unmeasured}); err != nil {
		t.Fatal(err)
	}
	checkUsage(t, s, map[string]run.Usage{"measured": measured.Usage, "no memory": noMemory.Usage, "unmeasured": {}})
}

// TestUsageOfATableFromBefore: a table of hosts from before the cost
// columns reads as unmeasured, and gets them at the next EnsureSchema.
func TestUsageOfATableFromBefore(t *testing.T) {
	url, db := newDB(t)
	s := openStore(t, url, "a")
	if err := s.Upsert(ctxOf(t), []run.Record{rec("j", "old", "a", run.OK, 0)}); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `ALTER TABLE cronvisor_runs DROP COLUMN cpu_user_us, DROP COLUMN cpu_system_us,
		DROP COLUMN memory_peak_bytes, DROP COLUMN oom_killed`)
	checkUsage(t, s, map[string]run.Usage{"old": {}})

	newer := openStore(t, url, "b") // its EnsureSchema adds them again
	r := rec("j", "new", "b", run.OK, 1)
	r.Usage = run.Usage{Measured: true, CPUUser: time.Second}
	if err := newer.Upsert(ctxOf(t), []run.Record{r}); err != nil {
		t.Fatal(err)
	}
	checkUsage(t, s, map[string]run.Usage{"old": {}, "new": r.Usage})
}

func checkUsage(t *testing.T, s *Store, want map[string]run.Usage) {
	t.Helper()
	got, err := s.Query(ctxOf(t), history.Filter{})
	if err != nil || len(got) != len(want) {
		t.Fatalf("Query = %d records, %v; want %d", len(got), err, len(want))
	}
	for _, r := range got {
		if w, ok := want[r.RunID]; !ok || r.Usage != w {
			t.Errorf("%s: usage %+v, want %+v", r.RunID, r.Usage, w)
		}
	}
}
