package semaphore

import (
	"io"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/redis"
	"cronvisor/internal/lock/sql"
)

func TestDefaultPrefixIsTheBackends(t *testing.T) {
	for kind, p := range map[string]string{"redis": redis.DefaultKeyPrefix, "sql": sql.DefaultSQLPrefix} {
		if p != defaultPrefix {
			t.Errorf("defaultPrefix %q, %s's %q", defaultPrefix, kind, p)
		}
	}
}

// Slots and job locks never meet: a job lock of a slot's lock name, or
// of the prefix's "resource." and that name, is another lock, and the
// job locks' List does not show the slots.
func TestSlotsHaveANamespaceOfTheirOwn(t *testing.T) {
	eachSettings(t, func(t *testing.T, b lock.Backend, s lock.Settings) {
		ctx := locktest.Context(t, 20*time.Second)
		sm := opener(t, b, s)(map[string]int{"db": 1})
		mustTake(ctx, t, sm, req("slotjob", "db", 1))
		jobs, err := b.Open(s)
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := jobs.(io.Closer); ok {
			t.Cleanup(func() { _ = c.Close() })
		}
		for _, name := range []string{"db.0", "resource.db.0"} {
			g, err := jobs.Acquire(ctx, lock.Request{Name: name, Record: lock.Record{Holder: run.Holder{Job: "job"}}})
			if err != nil {
				t.Fatalf("job lock %s beside slot db/0: %v", name, err)
			}
			t.Cleanup(func() { _ = g.Release() })
		}
		all, err := jobs.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range all {
			if st.Record.Job != "job" {
				t.Errorf("the job locks' List shows %s held by %s", st.Name, st.Record.Job)
			}
		}
		if got := heldSlots(ctx, t, sm, "db"); len(got) != 1 || got[0] != "db/0=slotjob" {
			t.Errorf("slots held %v, want db/0=slotjob", got)
		}
	})
}

// A prefix of the user's moves the slots with it, and stays one that
// the backend takes.
func TestSlotPrefix(t *testing.T) {
	for _, tc := range []struct {
		b      lock.Backend
		prefix string
		want   string
	}{
		{redis.Redis, "", "cronvisor.resource:"},
		{redis.Redis, "team:", "team.resource:"},
		{redis.Redis, "team", "team.resource:"},
		{sql.Postgres, "", "cronvisor.resource:"},
		{sql.MySQL, "a.b-c:", "a.b-c.resource:"},
	} {
		s, err := slotSettings(tc.b, lock.Settings{Prefix: tc.prefix, LocksDir: "/nonexistent/locks"})
		if _, perr := tc.b.CheckPrefix(s.Prefix); perr != nil {
			t.Errorf("%s refuses the slots' prefix %q: %v", tc.b.Name, s.Prefix, perr)
		}
		if err != nil || s.Prefix != tc.want || s.LocksDir != "/nonexistent/locks" {
			t.Errorf("%s prefix %q: slots under %q (%v), want %q", tc.b.Name, tc.prefix, s.Prefix, err, tc.want)
		}
	}
}
