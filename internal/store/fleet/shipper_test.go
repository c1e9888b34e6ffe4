package fleet

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/store/history"
)

// localStore is a real history store with shipping on.
func localStore(t *testing.T) *history.Store {
	t.Helper()
	st, err := history.Open(filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.SetShipping(ctxOf(t), true); err != nil {
		t.Fatal(err)
	}
	return st
}

// writeRun records a run of job from its start to its end with outcome.
func writeRun(ctx context.Context, st *history.Store, id string, at time.Time, o run.Outcome) error {
	r := run.Record{Job: "j", RunID: id, ScheduledAt: at, StartedAt: at, Host: "a", Attempt: 1}
	if err := st.Start(ctx, r); err != nil {
		return err
	}
	r.Outcome, r.EndedAt = o, at.Add(time.Millisecond)
	return st.Finish(ctx, r)
}

// shared is the run ids and outcomes in the shared table.
func sharedRuns(t *testing.T, db *sql.DB) (map[string]string, error) {
	t.Helper()
	rows, err := db.QueryContext(ctxOf(t), `SELECT run_id, outcome FROM cronvisor_runs`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, o string
		if err := rows.Scan(&id, &o); err != nil {
			return nil, err
		}
		out[id] = o
	}
	return out, rows.Err()
}

// localRuns is the run ids and outcomes in the local store.
func localRuns(t *testing.T, st *history.Store) map[string]string {
	t.Helper()
	recs, err := st.Query(ctxOf(t), history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range recs {
		out[r.RunID] = string(r.Outcome)
	}
	return out
}

// waitShipped waits until the outbox is empty and the shared table holds
// exactly the local records, and fails after limit.
func waitShipped(t *testing.T, st *history.Store, db *sql.DB, limit time.Duration) {
	t.Helper()
	want := localRuns(t, st)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(limit)
	for {
		n, _ := st.Outbox(ctxOf(t))
		got, err := sharedRuns(t, db)
		if n == 0 && err == nil && maps.Equal(got, want) {
			return
		}
		select {
		case <-deadline:
			t.Fatalf("after %v: outbox %d, shared %d records (%v), local %d; missing or different: %v",
				limit, n, len(got), err, len(want), diff(want, got))
		case <-tick.C:
		}
	}
}

// diff lists the run ids whose outcome differs between want and got.
func diff(want, got map[string]string) []string {
	var out []string
	for id, o := range want {
		if got[id] != o {
			out = append(out, fmt.Sprintf("%s: %q, shared %q", id, o, got[id]))
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			out = append(out, id+": only shared")
		}
	}
	slices.Sort(out)
	return out
}

// The past is shipped when shipping starts, and each later record as it
// is written, once, with its final outcome.
func TestShipper(t *testing.T) {
	url, db := newDB(t)
	st := localStore(t)
	ctx := ctxOf(t)
	for i := range 50 {
		if err := writeRun(ctx, st, fmt.Sprintf("past-%02d", i), minute(i), run.OK); err != nil {
			t.Fatal(err)
		}
	}
	sh := NewShipper(st, openStore(t, url, "a"))
	defer sh.Close()
	for i := range 50 {
		if err := writeRun(ctx, st, fmt.Sprintf("new-%02d", i), minute(100+i), run.Failed); err != nil {
			t.Fatal(err)
		}
		sh.Nudge()
	}
	waitShipped(t, st, db, 10*time.Second)
	if got, _ := sharedRuns(t, db); len(got) != 100 {
		t.Errorf("shared records %d, want 100", len(got))
	}
}

// While the server is down, records keep being written and wait in the
// outbox; once it is back every one of them is shipped, exactly once.
func TestShipperOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("stops and restarts PostgreSQL: seconds; runs in the full suite")
	}
	url, db := newDB(t)
	st := localStore(t)
	sh := NewShipper(st, openStore(t, url, "a"))
	defer sh.Close()
	ctx, stop := context.WithCancel(ctxOf(t))
	var wg sync.WaitGroup
	var written int
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for ; ctx.Err() == nil; <-tick.C {
			if writeRun(ctx, st, fmt.Sprintf("r-%04d", written), base().Add(time.Duration(written)*time.Second), run.OK) == nil {
				written++
			}
			sh.Nudge()
		}
	}()
	pg := postgres(t)
	time.Sleep(time.Second)
	pg.Stop()
	time.Sleep(3 * time.Second)
	if n, _ := st.Outbox(ctxOf(t)); n == 0 {
		t.Error("the outbox is empty while the server is down")
	}
	if err := pg.Start(); err != nil {
		t.Fatalf("restart: %v", err)
	}
	time.Sleep(time.Second)
	stop()
	wg.Wait()
	waitShipped(t, st, db, 15*time.Second)
	t.Logf("%d runs written, all shipped once", written)
}

// A connection that goes silent (half-open: no error, no answer, for
// good) fails its round at the deadline with a warning; once the server
// can be reached again, the shipper dials afresh and everything that
// waited ships within backoffMax, with no warning after it.
func TestShipperHalfOpenConnection(t *testing.T) {
	if testing.Short() {
		t.Skip("a 12 s cut of a real connection; runs in the full suite")
	}
	url, db := newDB(t)
	hole := newBlackhole(t, postgres(t).Addr())
	st := localStore(t)
	tape := newTape()
	sh := NewShipper(st, openStore(t, hole.via(t, url), "a"), WithShipperLog(slog.New(tape)))
	defer sh.Close()
	ctx := ctxOf(t)
	write := func(from, n int) {
		for i := from; i < from+n; i++ {
			if err := writeRun(ctx, st, fmt.Sprintf("r-%02d", i), minute(i), run.OK); err != nil {
				t.Fatal(err)
			}
			sh.Nudge()
		}
	}
	write(0, 5)
	waitShipped(t, st, db, 5*time.Second)
	hole.silence()
	cut := time.Now()
	write(5, 5)
	warned := func() bool {
		return slices.ContainsFunc(tape.get(), func(l logLine) bool { return l.msg == cannotShip })
	}
	for !warned() && time.Since(cut) < stepTimeout+2*time.Second {
		time.Sleep(50 * time.Millisecond)
	}
	if !warned() {
		t.Fatalf("no %q within %v of the cut", cannotShip, stepTimeout+2*time.Second)
	}
	time.Sleep(12*time.Second - time.Since(cut))
	hole.heal()
	healed := time.Now()
	waitShipped(t, st, db, backoffMax+time.Second)
	t.Logf("warned %v after the cut; shipped %v after the heal", tape.get()[0].at-cut.Sub(tape.t0), time.Since(healed))
	if err := sh.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	lines := tape.get()
	i := slices.IndexFunc(lines, func(l logLine) bool { return l.msg == shipsAgain })
	if i < 0 || slices.ContainsFunc(lines[i:], func(l logLine) bool { return l.msg == cannotShip }) {
		t.Errorf("logged %v, want %q once and no %q after it", lines, shipsAgain, cannotShip)
	}
}
