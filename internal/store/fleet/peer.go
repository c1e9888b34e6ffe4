package fleet

import (
	"context"
	"fmt"
	"time"

	"cronvisor/internal/base/run"
)

// LostWithoutLock is how long a host must have been silent before a peer
// closes its runs when nothing tells whether their locks are still held:
// the lock backend is not PostgreSQL on this database (no cronvisor_locks
// table here, or no record of the run's job in it: a job that takes no
// lock, overlap allow, has none either). It is long enough for a
// daemon's restart or hand-over (SIGUSR2) to beat again, since the runs
// then go on under their keepers; a run that outlives a dead daemon for
// longer under its keeper is closed while it still runs.
const LostWithoutLock = time.Minute

// HostLostReason starts the reason of every run a peer closes.
const HostLostReason = "host lost"

// CloseLostRuns closes, as interrupted with reason "host lost: ...", every
// run of another host that the shared history has as running while its
// host is lost. It is one UPDATE: the row lock makes one peer the winner
// of each run (a peer that waited on it finds the run no longer running),
// and the runs returned are this peer's alone, for it to notify.
//
// A run is closed when its host's last beat (or, for a host that never
// beat, the run's last shipping) is older than UpWithin and its lock is
// no longer held, or older than LostWithoutLock when that cannot be told.
// "Held" is read from package lock's PostgreSQL tables when the lock
// backend is on this same database: the run's cronvisor_locks record
// names a session (conn_id) that still holds the lock's advisory key in
// pg_locks. A run whose daemon died goes on under its keeper, which holds
// that session: it is not closed until the keeper lets go of the lock.
//
// Its ended_at is the host's last beat, converted to the host's own clock
// by the offset it last measured (the clock its started_at was read
// from), and never before started_at: the last instant the host is known
// to have been alive, so a lower bound of the run's real end.
//
// A daemon's peer closes through Watched instead, which counts only the
// silence the peer itself watched.
func (s *Store) CloseLostRuns(ctx context.Context) ([]run.Record, error) {
	return s.closeLost(ctx, time.Time{})
}

// Watch is a peer's closing of lost hosts' runs that counts a host's
// silence only from Since on: the start, by the server's clock, of the
// peer's own unbroken run of beats. After a gap in its own beating (the
// server restarted, the network failed, the peer froze) every other
// host's beat looks stale too, because theirs failed as well; the peer
// then waits a whole staleness period of its own successful beating, in
// which the live hosts beat again, before it judges any host lost.
type Watch struct {
	store *Store
	since time.Time
}

// Watched is s's closing of lost hosts' runs by a peer beating without a
// gap since since (the server's clock; zero: no bound).
func (s *Store) Watched(since time.Time) Watch { return Watch{store: s, since: since} }

// CloseLostRuns is Store.CloseLostRuns, with each host's silence counted
// from no earlier than w's since.
func (w Watch) CloseLostRuns(ctx context.Context) ([]run.Record, error) {
	return w.store.closeLost(ctx, w.since)
}

func (s *Store) closeLost(ctx context.Context, since time.Time) ([]run.Record, error) {
	if err := s.EnsureSchema(ctx); err != nil {
		return nil, err
	}
	var locks bool
	if err := s.db.QueryRowContext(ctx, `SELECT to_regclass('cronvisor_locks') IS NOT NULL`).Scan(&locks); err != nil {
		return nil, fmt.Errorf("history backend: close lost hosts' runs: %w", err)
	}
	var watched any // NULL: GREATEST ignores it
	if !since.IsZero() {
		watched = since
	}
	rows, err := s.db.QueryContext(ctx, closeLostQuery(locks), s.host,
		UpWithin.Microseconds(), LostWithoutLock.Microseconds(), watched)
	if err != nil {
		return nil, fmt.Errorf("history backend: close lost hosts' runs: %w", err)
	}
	defer rows.Close()
	var out []run.Record
	for rows.Next() {
		r, err := scanClosed(rows)
		if err != nil {
			return out, fmt.Errorf("history backend: close lost hosts' runs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("history backend: close lost hosts' runs: %w", err)
	}
	return out, nil
}

// lockTerms are the candidate's "tracked" (its job's lock is recorded
// here: some record names the job, this run's own or, once another run
// took the lock over, that run's) and "held" (its own record's session
// still holds the lock) columns, given package lock's tables; false and
// false without them. A job with no record here locks elsewhere or not
// at all (overlap: allow), and only the heartbeat can tell. A lock
// record's key is PostgresLockKey (lock/sql) of its name, which pg_locks
// splits into classid (the high 32 bits) and objid.
func lockTerms(locks bool) string {
	if !locks {
		return `false AS tracked, false AS held`
	}
	return `EXISTS (SELECT 1 FROM cronvisor_locks l WHERE l.job = r.job) AS tracked,
		EXISTS (SELECT 1 FROM cronvisor_locks l JOIN pg_locks p
			ON p.locktype = 'advisory' AND p.granted AND p.objsubid = 1 AND p.pid = l.conn_id
			AND p.database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND ((p.classid::int8 << 32) | p.objid::int8) =
				('x' || left(encode(sha256(convert_to(l.name, 'UTF8')), 'hex'), 16))::bit(64)::bigint
			WHERE l.run_id = r.run_id) AS held`
}

// closeLostQuery is CloseLostRuns' statement: $1 this host, $2 and $3
// UpWithin and LostWithoutLock in microseconds, $4 the start of the
// peer's watch (NULL: none); a host's silence is counted from the later
// of its last beat and $4. The candidates are read
// once; the outer WHERE's outcome test is what PostgreSQL checks again on
// a row another peer updated first.
func closeLostQuery(locks bool) string {
	return `WITH c AS (
		SELECT r.run_id, h.host IS NOT NULL AS beat,
			COALESCE(h.last_beat, r.shipped_at) AS seen,
			COALESCE(h.clock_offset_ms, 0) AS offset_ms, ` + lockTerms(locks) + `
		FROM cronvisor_runs r LEFT JOIN cronvisor_hosts h ON h.host = r.host
		WHERE r.outcome = 'running' AND r.host <> $1)
	UPDATE cronvisor_runs r SET outcome = 'interrupted',
		ended_at = GREATEST(
			(EXTRACT(EPOCH FROM c.seen) * 1e9)::bigint + c.offset_ms * 1000000,
			COALESCE(r.started_at, 0)),
		reason = 'host lost: ' || CASE WHEN c.beat
			THEN 'no heartbeat from ' || r.host || ' since '
			ELSE r.host || ' never sent a heartbeat; its run was last shipped at ' END
			|| to_char(c.seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
			|| CASE WHEN c.tracked THEN ' and its lock is free' ELSE '' END
			|| '; closed by ' || $1::text
	FROM c
	WHERE r.run_id = c.run_id AND r.outcome = 'running' AND NOT c.held
		AND now() - GREATEST(c.seen, $4::timestamptz) > make_interval(secs => (CASE WHEN c.tracked THEN $2::bigint ELSE $3::bigint END)::float8 / 1e6)
	RETURNING r.job, r.run_id, r.host, r.scheduled_at, r.started_at, r.ended_at, r.reason,
		r.log_path, r.supervisor_pid, r.pid, r.manual, r.attempt`
}

type scanner interface{ Scan(dest ...any) error }

func scanClosed(sc scanner) (run.Record, error) {
	r := run.Record{Outcome: run.Interrupted}
	var slot, started, ended *int64
	err := sc.Scan(&r.Job, &r.RunID, &r.Host, &slot, &started, &ended, &r.Reason,
		&r.LogPath, &r.SupervisorPID, &r.PID, &r.Manual, &r.Attempt)
	r.ScheduledAt, r.StartedAt, r.EndedAt = peerTime(slot), peerTime(started), peerTime(ended)
	return r, err
}
