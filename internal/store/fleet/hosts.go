package fleet

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"
)

// BeatEvery is how often a daemon beats: its cronvisor_hosts row's
// last_beat is at most this old while it runs.
const BeatEvery = time.Second

// UpWithin is how recent a host's last beat must be, by the server's
// clock, for Hosts to call it up: three beats, so that one slow beat (a
// busy server, a dropped connection redialled) does not flap a host to
// lost. A peer uses the same bound before it closes a host's runs whose
// locks are free (see CloseLostRuns).
const UpWithin = 3 * time.Second

// HostState is what Hosts says of a host.
type HostState string

// The states of a host.
const (
	HostUp      HostState = "up"      // its last beat is within UpWithin
	HostStopped HostState = "stopped" // it shut down cleanly (Stopped) and has not beaten since
	HostLost    HostState = "lost"    // neither: it died, or cannot reach the server
)

// Host is one host of the fleet as the server knows it.
type Host struct {
	Name    string
	Version string
	PID     int
	Started time.Time // its daemon's start, by its own clock
	// LastBeat is its last heartbeat by the server's clock (zero when
	// it never beat but has runs in the shared history); Silent is how
	// long ago that was, by the server's clock too.
	LastBeat time.Time
	Silent   time.Duration
	// Offset is its clock minus the server's, measured at its last beat.
	Offset  time.Duration
	State   HostState
	Running []RunningRun // its runs the shared history has as running, oldest first
}

// RunningRun is a run the shared history has as running.
type RunningRun struct {
	Job     string
	RunID   string
	Started time.Time
}

// Beat says this host is alive: it upserts the host's row with last_beat
// the server's now(), clears stopped, and returns this host's clock minus
// the server's and the last_beat it wrote (the server's clock: a peer
// tells a gap in its own beating by it). The offset is measured around a
// round trip of its own (the local midpoint of the query minus the
// server's clock_timestamp()), so that the write's own time does not
// count; it is stored in the row.
func (s *Store) Beat(ctx context.Context, version string, pid int, started time.Time) (offset time.Duration, at time.Time, err error) {
	if err := s.EnsureSchema(ctx); err != nil {
		return 0, time.Time{}, err
	}
	offset, err = s.clockOffset(ctx)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("history backend: heartbeat: %w", err)
	}
	err = s.db.QueryRowContext(ctx, `INSERT INTO cronvisor_hosts AS h
		(host, version, pid, started_at, last_beat, clock_offset_ms, stopped)
		VALUES ($1, $2, $3, $4, now(), $5, false)
		ON CONFLICT (host) DO UPDATE SET version = EXCLUDED.version, pid = EXCLUDED.pid,
			started_at = EXCLUDED.started_at, last_beat = EXCLUDED.last_beat,
			clock_offset_ms = EXCLUDED.clock_offset_ms, stopped = false
		RETURNING last_beat`,
		s.host, version, pid, started.UTC(), offset.Milliseconds()).Scan(&at)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("history backend: heartbeat: %w", err)
	}
	return offset, at, nil
}

// clockOffset is this host's clock minus the server's.
func (s *Store) clockOffset(ctx context.Context) (time.Duration, error) {
	var server time.Time
	t0 := time.Now()
	if err := s.db.QueryRowContext(ctx, `SELECT clock_timestamp()`).Scan(&server); err != nil {
		return 0, err
	}
	t1 := time.Now()
	mid := t0.Add(t1.Sub(t0) / 2)
	return mid.Round(0).Sub(server), nil
}

// Stopped marks this host as shut down cleanly: Hosts says stopped
// rather than lost until it beats again.
func (s *Store) Stopped(ctx context.Context) error {
	if err := s.EnsureSchema(ctx); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, `UPDATE cronvisor_hosts SET stopped = true WHERE host = $1`, s.host)
	if err != nil {
		return fmt.Errorf("history backend: mark the host stopped: %w", err)
	}
	return nil
}

// PeersUpSince is the earliest start, by this host's clock, of the other
// hosts up now (each beat within UpWithin and did not stop), false when
// none is. A daemon up now has been up since its start (a restart gives
// its row a new start), firing every slot of its jobs from then on, so
// the slots after that instant are a live peer's to account for, not
// this host's to call missed.
func (s *Store) PeersUpSince(ctx context.Context) (time.Time, bool, error) {
	if err := s.EnsureSchema(ctx); err != nil {
		return time.Time{}, false, err
	}
	offset, err := s.clockOffset(ctx)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("history backend: the hosts up: %w", err)
	}
	// started_at is by each host's clock: minus its offset, the server's.
	var since sql.NullTime
	err = s.db.QueryRowContext(ctx, `SELECT MIN(started_at - make_interval(secs => clock_offset_ms / 1000.0))
		FROM cronvisor_hosts WHERE host <> $1 AND NOT stopped
			AND now() - last_beat <= make_interval(secs => $2::bigint / 1e6)`,
		s.host, UpWithin.Microseconds()).Scan(&since)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("history backend: the hosts up: %w", err)
	}
	if !since.Valid {
		return time.Time{}, false, nil
	}
	return since.Time.Add(offset), true, nil
}

// Hosts lists every host of the fleet, by name: each with a row in
// cronvisor_hosts, and each that has running runs in the shared history
// but never beat (lost, with only its runs known).
func (s *Store) Hosts(ctx context.Context) ([]Host, error) {
	if err := s.EnsureSchema(ctx); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT host, version, pid, started_at, last_beat,
			EXTRACT(EPOCH FROM (now() - last_beat))::float8, clock_offset_ms, stopped
		FROM cronvisor_hosts ORDER BY host`)
	if err != nil {
		return nil, fmt.Errorf("history backend: list the hosts: %w", err)
	}
	defer rows.Close()
	var hosts []Host
	index := map[string]int{}
	for rows.Next() {
		var h Host
		var silent float64
		var offsetMS int64
		var stopped bool
		if err := rows.Scan(&h.Name, &h.Version, &h.PID, &h.Started, &h.LastBeat, &silent, &offsetMS, &stopped); err != nil {
			return nil, fmt.Errorf("history backend: list the hosts: %w", err)
		}
		h.Silent = time.Duration(silent * float64(time.Second))
		h.Offset = time.Duration(offsetMS) * time.Millisecond
		h.State = stateOf(h.Silent, stopped)
		index[h.Name] = len(hosts)
		hosts = append(hosts, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history backend: list the hosts: %w", err)
	}
	return s.addRunning(ctx, hosts, index)
}

// stateOf is a host's state from how long it has been silent and whether
// it said it stopped. A stopped host that beats again is up.
func stateOf(silent time.Duration, stopped bool) HostState {
	switch {
	case stopped:
		return HostStopped
	case silent <= UpWithin:
		return HostUp
	}
	return HostLost
}

// addRunning adds each host's running runs, and the hosts that have
// some but no row of their own.
func (s *Store) addRunning(ctx context.Context, hosts []Host, index map[string]int) ([]Host, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT host, job, run_id, started_at FROM cronvisor_runs
		WHERE outcome = 'running' ORDER BY host, started_at, run_id`)
	if err != nil {
		return nil, fmt.Errorf("history backend: list the running runs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var host string
		var r RunningRun
		var started *int64
		if err := rows.Scan(&host, &r.Job, &r.RunID, &started); err != nil {
			return nil, fmt.Errorf("history backend: list the running runs: %w", err)
		}
		r.Started = peerTime(started)
		i, ok := index[host]
		if !ok {
			i = len(hosts)
			index[host] = i
			hosts = append(hosts, Host{Name: host, State: HostLost})
		}
		hosts[i].Running = append(hosts[i].Running, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history backend: list the running runs: %w", err)
	}
	sortHosts(hosts)
	return hosts, nil
}

// sortHosts orders hosts by name.
func sortHosts(hosts []Host) {
	slices.SortFunc(hosts, func(a, b Host) int { return strings.Compare(a.Name, b.Name) })
}

// peerTime reads a nullable Unix-nanosecond column.
func peerTime(ns *int64) time.Time {
	if ns == nil {
		return time.Time{}
	}
	return time.Unix(0, *ns)
}
