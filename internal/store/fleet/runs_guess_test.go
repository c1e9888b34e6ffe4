package fleet

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// A dead host's own guess of its run's end (recovery's interrupted,
// written when it came back) does not replace a peer's better estimate
// (the host's last beat): the earlier end stays, with the peer's reason
// and the host's after it, once however often it is shipped. A real end
// (a keeper's) still replaces the peer's guess, merged or not.
func TestUpsertOwnGuessOverPeerGuess(t *testing.T) {
	died := "supervisor (pid 4241 on dead) died during the run; exit status unknown"
	failed := func(r run.Record) run.Record {
		code := 1
		r.Outcome, r.ExitCode, r.Reason = run.Failed, &code, "exit status 1"
		return r
	}
	cases := []struct {
		name   string
		writes func(guess run.Record) []run.Record // shipped by the dead host once it is back
		want   string                              // the outcome: "interrupted" keeps the peer's estimate
	}{
		{"own guess", func(g run.Record) []run.Record { return []run.Record{g} }, "interrupted"},
		{"own guess shipped twice", func(g run.Record) []run.Record { return []run.Record{g, g} }, "interrupted"},
		{"a keeper's real end", func(g run.Record) []run.Record { return []run.Record{failed(g)} }, "failed"},
		{"own guess, then a real end", func(g run.Record) []run.Record { return []run.Record{g, failed(g)} }, "failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url, db := newDB(t)
			dead, peer := lostRun(t, url, db, "r1")
			peerEnd, peerReason := endOf(t, db, "r1")
			back := time.Now().Add(time.Minute) // the restart, well after the last beat
			guess := rec("job-r1", "r1", "dead", run.Interrupted, 0)
			guess.StartedAt, guess.ScheduledAt = time.Unix(0, startOf(t, db, "r1")), time.Unix(0, startOf(t, db, "r1"))
			guess.EndedAt, guess.ExitCode, guess.Reason = back, nil, died
			for _, w := range tc.writes(guess) {
				if err := dead.Upsert(ctxOf(t), []run.Record{w}); err != nil {
					t.Fatal(err)
				}
			}
			outcome, reason := outcomeOf(t, db, "r1")
			ended, _ := endOf(t, db, "r1")
			if outcome != tc.want {
				t.Fatalf("outcome %s (%s), want %s", outcome, reason, tc.want)
			}
			if tc.want != "interrupted" {
				if ended != back.UnixNano() || reason != "exit status 1" {
					t.Errorf("ended %v, reason %q; want the keeper's end %v, exit status 1", time.Unix(0, ended), reason, back)
				}
				return
			}
			if ended != peerEnd {
				t.Errorf("ended %v, want the peer's estimate %v (not the restart %v)", time.Unix(0, ended), time.Unix(0, peerEnd), back)
			}
			if want := peerReason + "; on its return dead recorded: " + died; reason != want {
				t.Errorf("reason %q, want %q", reason, want)
			}
			if again, err := peer.CloseLostRuns(t.Context()); err != nil || len(again) != 0 {
				t.Errorf("the peer closed %v again (%v)", again, err)
			}
		})
	}
}

// lostRun plants host "dead"'s running run runID, silences the host past
// LostWithoutLock and has a peer close the run as host lost; it returns
// the dead host's store and the peer's.
func lostRun(t *testing.T, url string, db *sql.DB, runID string) (dead, peer *Store) {
	t.Helper()
	dead, peer = openStore(t, url, "dead"), openStore(t, url, "peer")
	if _, _, err := dead.Beat(t.Context(), "v", 1, time.Now()); err != nil {
		t.Fatal(err)
	}
	insertRunning(t, db, runID, "job-"+runID, "dead", time.Now().Add(-time.Hour))
	silence(t, db, "dead", LostWithoutLock+time.Second)
	closed, err := peer.CloseLostRuns(t.Context())
	if err != nil || len(closed) != 1 {
		t.Fatalf("the peer closed %v, %v; want the dead host's run", closed, err)
	}
	return dead, peer
}

// endOf reads a run's ended_at (nanoseconds) and reason.
func endOf(t *testing.T, db *sql.DB, runID string) (int64, string) {
	t.Helper()
	var ended sql.NullInt64
	var reason string
	if err := db.QueryRowContext(t.Context(), `SELECT ended_at, reason FROM cronvisor_runs WHERE run_id = $1`, runID).
		Scan(&ended, &reason); err != nil {
		t.Fatalf("read run %s: %v", runID, err)
	}
	return ended.Int64, reason
}

// startOf reads a run's started_at (nanoseconds).
func startOf(t *testing.T, db *sql.DB, runID string) int64 {
	t.Helper()
	var started int64
	if err := db.QueryRowContext(t.Context(), `SELECT started_at FROM cronvisor_runs WHERE run_id = $1`, runID).
		Scan(&started); err != nil {
		t.Fatalf("read run %s: %v", runID, err)
	}
	return started
}

// ownGuess tells recovery's guess of a dead supervisor's run from every
// end someone saw.
func TestOwnGuess(t *testing.T) {
	code := 0
	cases := []struct {
		name string
		r    run.Record
		want bool
	}{
		{"recovery, during the run", run.Record{Outcome: run.Interrupted,
			Reason: "supervisor (pid 12 on web1) died during the run; exit status unknown"}, true},
		{"recovery, as it started", run.Record{Outcome: run.Interrupted,
			Reason: "supervisor (pid 12 on web1) died as the run was starting; whether it ran is unknown"}, true},
		{"a keeper that could not learn the status", run.Record{Outcome: run.Interrupted,
			Reason: "supervisor died during the run; exit status unknown"}, false},
		{"a keeper's kill", run.Record{Outcome: run.Interrupted, Reason: "killed by operator"}, false},
		{"an exit code", run.Record{Outcome: run.Interrupted, ExitCode: &code,
			Reason: "supervisor (pid 12 on web1) died during the run; exit status unknown"}, false},
		{"another outcome", run.Record{Outcome: run.Failed,
			Reason: "supervisor (pid 12 on web1) died during the run; exit status unknown"}, false},
		{"a peer's guess", run.Record{Outcome: run.Interrupted, Reason: HostLostReason + ": no heartbeat from web1"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ownGuess(tc.r); got != tc.want {
				t.Errorf("ownGuess(%q) = %v, want %v", tc.r.Reason, got, tc.want)
			}
		})
	}
	if !strings.HasPrefix(HostLostReason, "host lost") {
		t.Errorf("HostLostReason %q no longer starts as upsertSQL's peerGuess matches", HostLostReason)
	}
}
