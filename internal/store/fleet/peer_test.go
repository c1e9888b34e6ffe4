package fleet

import (
	"database/sql"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
	sqllock "cronvisor/internal/lock/sql"
)

// peerCase is a running run of another host and whether a peer closes it.
type peerCase struct {
	name   string
	runID  string
	host   string
	silent time.Duration // the host's silence; 0: fresh; <0: no row
	closes bool
	reason string // what the reason carries after "host lost: "
}

// checkClosed asserts that closed is exactly the cases that close, and
// that the shared history says so of every case.
func checkClosed(t *testing.T, db *sql.DB, closed []run.Record, cases []peerCase) {
	t.Helper()
	got := map[string]run.Record{}
	for _, r := range closed {
		got[r.RunID] = r
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, returned := got[c.runID]
			outcome, reason := outcomeOf(t, db, c.runID)
			if returned != c.closes || (outcome == "interrupted") != c.closes {
				t.Fatalf("returned %v, outcome %s (%s); want closed %v", returned, outcome, reason, c.closes)
			}
			if !c.closes {
				return
			}
			if !strings.HasPrefix(reason, HostLostReason+": ") || !strings.Contains(reason, c.reason) ||
				r.Reason != reason || r.Host != c.host || r.Outcome != run.Interrupted {
				t.Errorf("record %+v, reason in the history %q; want host lost naming %q", r, reason, c.reason)
			}
			if r.EndedAt.Before(r.StartedAt) || r.EndedAt.After(time.Now()) {
				t.Errorf("ended %v, started %v: want the last beat, not before the start", r.EndedAt, r.StartedAt)
			}
		})
	}
}

// plant writes each case's host and running run.
func plant(t *testing.T, db *sql.DB, url string, cases []peerCase) {
	t.Helper()
	beaten := map[string]bool{}
	for _, c := range cases {
		if c.silent >= 0 && !beaten[c.host] {
			beaten[c.host] = true
			if _, _, err := openStore(t, url, c.host).Beat(t.Context(), "v", 1, time.Now()); err != nil {
				t.Fatal(err)
			}
			if c.silent > 0 {
				silence(t, db, c.host, c.silent)
			}
		}
		insertRunning(t, db, c.runID, "job-"+c.runID, c.host, time.Now().Add(-time.Hour))
		if c.silent < 0 {
			mustExec(t, db, `UPDATE cronvisor_runs SET shipped_at = now() - interval '2 minutes' WHERE run_id = $1`, c.runID)
		}
	}
}

// Without package lock's tables, the heartbeat alone decides, over the
// longer LostWithoutLock.
func TestCloseLostRunsByHeartbeatAlone(t *testing.T) {
	url, db := newDB(t)
	peer := openStore(t, url, "peer")
	cases := []peerCase{
		{name: "silent past LostWithoutLock", runID: "r1", host: "dead", silent: LostWithoutLock + time.Second,
			closes: true, reason: "no heartbeat from dead since"},
		{name: "silent past UpWithin only", runID: "r2", host: "slow", silent: UpWithin + 5*time.Second},
		{name: "fresh", runID: "r3", host: "alive"},
		{name: "never beat, shipped long ago", runID: "r4", host: "ghost", silent: -1,
			closes: true, reason: "ghost never sent a heartbeat"},
		{name: "this host's own", runID: "r5", host: "peer", silent: 2 * LostWithoutLock},
	}
	plant(t, db, url, cases)
	closed, err := peer.CloseLostRuns(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	checkClosed(t, db, closed, cases)
	again, err := peer.CloseLostRuns(t.Context())
	if err != nil || len(again) != 0 {
		t.Errorf("a second call closed %v, %v; want nothing", again, err)
	}
}

// takeLock takes lock name for runID of job "job-"+runID as host would,
// with package lock's PostgreSQL backend on the same database.
func takeLock(t *testing.T, url, host, name, runID string) lock.Grant {
	t.Helper()
	return takeLockFor(t, url, host, name, "job-"+runID, runID)
}

// takeLockFor takes lock name for job's run runID as host would.
func takeLockFor(t *testing.T, url, host, name, job, runID string) lock.Grant {
	t.Helper()
	l, err := sqllock.NewPostgresLocker(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	g, err := l.Acquire(t.Context(), lock.Request{Name: name,
		Record: lock.Record{Holder: run.Holder{Host: host, Job: job, RunID: runID}}})
	if err != nil {
		t.Fatalf("take lock %s: %v", name, err)
	}
	t.Cleanup(func() { _ = g.Release() })
	return g
}

// With the lock on the same database, a silent host's run is closed once
// its lock is free, and not while its session holds it.
func TestCloseLostRunsWithPostgresLocks(t *testing.T) {
	url, db := newDB(t)
	peer := openStore(t, url, "peer")
	stale := UpWithin + time.Second
	cases := []peerCase{
		{name: "silent, lock held", runID: "held", host: "dead", silent: stale},
		{name: "silent, lock released", runID: "released", host: "dead", silent: stale,
			closes: true, reason: "since"},
		{name: "silent, lock's session terminated", runID: "killed", host: "dead", silent: stale,
			closes: true, reason: "and its lock is free"},
		{name: "fresh, lock released", runID: "fresh", host: "alive"},
		{name: "this host's own, lock released", runID: "own", host: "peer", silent: time.Hour},
		// No lock record names its job (overlap: allow, or a lock
		// elsewhere): nothing says it ended, so the longer silence applies.
		{name: "silent, its job never locked here", runID: "unlocked", host: "dead", silent: stale},
		// Its lock was taken over by a run of another host: the record
		// names the job but another run, so this run's lock is free.
		{name: "silent, lock taken over", runID: "over", host: "dead", silent: stale,
			closes: true, reason: "and its lock is free"},
	}
	plant(t, db, url, cases)
	held := takeLock(t, url, "dead", "l-held", "held")
	if err := takeLock(t, url, "dead", "l-released", "released").Release(); err != nil {
		t.Fatal(err)
	}
	takeLock(t, url, "dead", "l-killed", "killed")
	mustExec(t, db, `SELECT pg_terminate_backend(conn_id::int, 5000) FROM cronvisor_locks WHERE run_id = 'killed'`)
	if err := takeLock(t, url, "dead", "l-over", "over").Release(); err != nil {
		t.Fatal(err)
	}
	takeLockFor(t, url, "alive", "l-over", "job-over", "next-run")
	for _, id := range []string{"fresh", "own"} {
		if err := takeLock(t, url, "alive", "l-"+id, id).Release(); err != nil {
			t.Fatal(err)
		}
	}
	closed, err := peer.CloseLostRuns(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	checkClosed(t, db, closed, cases)
	// The held lock is what kept its run open: once it is let go, the
	// next call closes the run.
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	closed, err = peer.CloseLostRuns(t.Context())
	if err != nil || len(closed) != 1 || closed[0].RunID != "held" {
		t.Fatalf("after the release: closed %+v, %v; want the held run", closed, err)
	}
}

// Several peers closing at once: each run is closed by exactly one.
func TestCloseLostRunsOneWinnerPerRun(t *testing.T) {
	url, db := newDB(t)
	peers := []*Store{openStore(t, url, "p1"), openStore(t, url, "p2"), openStore(t, url, "p3")}
	if _, _, err := openStore(t, url, "dead").Beat(t.Context(), "v", 1, time.Now()); err != nil {
		t.Fatal(err)
	}
	const rounds, runs = 20, 10
	for round := range rounds {
		var want []string
		for i := range runs {
			id := "r" + string(rune('a'+round)) + string(rune('a'+i))
			want = append(want, id)
			insertRunning(t, db, id, "j", "dead", time.Now())
		}
		silence(t, db, "dead", 2*LostWithoutLock)
		var mu sync.Mutex
		var got []string
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, p := range peers {
			wg.Go(func() {
				<-start
				closed, err := p.CloseLostRuns(t.Context())
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				defer mu.Unlock()
				for _, r := range closed {
					got = append(got, r.RunID)
				}
			})
		}
		close(start)
		wg.Wait()
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: closed %v between them, want each of %v once", round, got, want)
		}
	}
}

// A peer whose own beating began recently counts a host's silence only
// from then: after a server restart every host looks silent, and none is
// closed until it stays so for the staleness period the peer watched.
func TestWatchedCountsSilenceFromThePeersOwnBeating(t *testing.T) {
	url, db := newDB(t)
	peer := openStore(t, url, "peer")
	cases := []peerCase{
		{name: "silent 20 s, no lock record", runID: "w1", host: "quiet", silent: 20 * time.Second},
		{name: "silent 70 s, no lock record", runID: "w2", host: "gone", silent: LostWithoutLock + 10*time.Second},
	}
	plant(t, db, url, cases)
	var now time.Time
	if err := db.QueryRowContext(t.Context(), `SELECT now()`).Scan(&now); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		since  time.Time
		closes []string
	}{
		{"beating for 2 s", now.Add(-2 * time.Second), nil},
		{"beating for 30 s", now.Add(-30 * time.Second), nil},
		{"beating for 55 s: the 70-s silence was watched for 55", now.Add(-55 * time.Second), nil},
		{"beating for 5 min", now.Add(-5 * time.Minute), []string{"w2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			closed, err := peer.Watched(c.since).CloseLostRuns(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range closed {
				ids = append(ids, r.RunID)
			}
			if !slices.Equal(ids, c.closes) {
				t.Errorf("closed %v, want %v", ids, c.closes)
			}
		})
	}
	// With the lock on this database the staleness is UpWithin: a host
	// silent 5 s is closed by a peer that beat through it, not by one
	// that has beaten for 2 s.
	silence(t, db, "quiet", UpWithin+2*time.Second)
	insertRunning(t, db, "w3", "job-w3", "quiet", time.Now().Add(-time.Hour))
	if err := takeLock(t, url, "quiet", "l-w3", "w3").Release(); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(t.Context(), `SELECT now()`).Scan(&now); err != nil {
		t.Fatal(err)
	}
	if closed, err := peer.Watched(now.Add(-2 * time.Second)).CloseLostRuns(t.Context()); err != nil || len(closed) != 0 {
		t.Errorf("a peer beating for 2 s closed %+v, %v; want nothing", closed, err)
	}
	closed, err := peer.Watched(now.Add(-10 * time.Second)).CloseLostRuns(t.Context())
	if err != nil || len(closed) != 1 || closed[0].RunID != "w3" {
		t.Errorf("a peer beating for 10 s closed %+v, %v; want w3", closed, err)
	}
}
