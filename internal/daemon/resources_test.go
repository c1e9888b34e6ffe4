package daemon

import (
	"context"
	"slices"
	"testing"

	"cronvisor/internal/config"
	"cronvisor/internal/store/history"
)

// usesDB is a job using two slots of db, of size as given.
func usesDB(size string) string {
	return "resources: {db: " + size + "}\n" + `jobs:
  - name: heavy
    schedule: "@every 1h"
    command: ["sh", "-c", "test -n \"$CRONVISOR_RESOURCES\""]
    timeout: 1m
    uses: {db: ` + size + `}
`
}

// TestResourcesWired: the daemon opens jobs.yaml's resources on its lock
// backend and gives them to its supervisor, whose run's record names its
// slots; a reload with other sizes applies them to the next fire, and the
// service's Semaphores list them.
func TestResourcesWired(t *testing.T) {
	h := newHarness(t, usesDB("1"))
	d := h.start()
	h.run(d, nil)
	fire := func(cfg *config.Config) []string {
		t.Helper()
		end := d.env.Supervisor.Fire(context.Background(), cfg.Jobs[0], h.clock.Now(), true)
		rs, err := d.env.Store.Query(context.Background(), history.Filter{Job: "heavy"})
		if err != nil || len(rs) == 0 || rs[0].RunID != end.RunID {
			t.Fatalf("history of %s (%s %q): %v, %v", end.RunID, end.Outcome, end.Reason, rs, err)
		}
		if rs[0].Outcome != "ok" {
			t.Errorf("run %s %q, want ok", rs[0].Outcome, rs[0].Reason)
		}
		return rs[0].Resources
	}
	if got := fire(d.current.Load()); !slices.Equal(got, []string{"db/0"}) {
		t.Errorf("slots %q, want db/0", got)
	}
	h.write(usesDB("2"))
	if err := d.Reload(context.Background()); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if got := fire(d.current.Load()); !slices.Equal(got, []string{"db/0", "db/1"}) {
		t.Errorf("slots after the reload %q, want db/0 db/1", got)
	}
	rs, err := d.Semaphores().List(context.Background())
	if err != nil || len(rs) != 1 || rs[0].Name != "db" || rs[0].Size != 2 || rs[0].HeldCount() != 0 {
		t.Errorf("List: %+v, %v; want db of 2 slots, none held", rs, err)
	}
}
