// Package fleetbench measures a fleet of cronvisor daemons on one
// PostgreSQL server (lock_backend and history_backend both): N "hosts"
// (daemons in UTS namespaces of their own, each with its own state dir
// and host name) on one machine, J jobs every E seconds, and over a
// window of whole slots it counts the PostgreSQL connections opened
// (log_connections), the records written to the shared history, the
// server's CPU (its processes' in /proc, reaped backends included), and
// whether every slot ran exactly once. cvbench fleet runs it by hand for
// BENCHMARKS.md; its test smoke-runs a small fleet. It needs root (unshare
// --uts) and a PostgreSQL install (internal/harness/sqltest).
package fleetbench

import (
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the admin connection

	"cronvisor/internal/harness/sqltest"
)

// Config is one measurement.
type Config struct {
	Bin      string        // the cronvisor binary (absolute)
	Hosts    int           // daemons
	Jobs     int           // default 50
	Every    time.Duration // each job's period; default 10s
	Duration time.Duration // the window, rounded down to whole periods; default 1m
	Dir      string        // a work directory
	Log      io.Writer     // progress; nil: none
}

// Result is what a window of Slots slots cost the server and the history.
type Result struct {
	Hosts, Jobs int
	Slots       int           // job slots in the window
	Connections int           // connections the server accepted in the window
	Records     int           // shared-history records of the window's slots
	Skips       int           // of which skip records
	RunOnce     int           // slots run exactly once
	Missed      int           // slots not run (none, or skipped)
	Twice       int           // slots run more than once
	ServerCPU   time.Duration // the server's CPU time in the window
	Audit       string        // the summary line of `cronvisor audit`
	// SkipReasons counts the skip records by their reason's first words.
	SkipReasons map[string]int
}

// String is the result's line per slot.
func (r Result) String() string {
	n := float64(max(r.Slots, 1))
	return fmt.Sprintf("%d hosts, %d slots: %.2f connections/slot, %.2f records/slot (%d skips), %.2f ms server CPU/slot; "+
		"run once %d, not run %d, twice %d; skips %v; audit: %s",
		r.Hosts, r.Slots, float64(r.Connections)/n, float64(r.Records)/n, r.Skips,
		float64(r.ServerCPU.Microseconds())/1000/n, r.RunOnce, r.Missed, r.Twice, r.SkipReasons, r.Audit)
}

func (c *Config) defaults() {
	if c.Jobs == 0 {
		c.Jobs = 50
	}
	if c.Every == 0 {
		c.Every = 10 * time.Second
	}
	if c.Duration == 0 {
		c.Duration = time.Minute
	}
	c.Duration = max(c.Duration.Truncate(c.Every), c.Every)
	if c.Log == nil {
		c.Log = io.Discard
	}
}

// Run measures cfg's fleet: a fresh server, the hosts started and up,
// then one window of whole slots.
func Run(cfg Config) (Result, error) {
	cfg.defaults()
	pg, err := sqltest.StartPostgres(sqltest.Settings("max_connections=1500", "log_connections=on",
		"log_line_prefix=%m ", "log_timezone=UTC"))
	if err != nil {
		return Result{}, err
	}
	defer pg.Close()
	if err := pg.CreateDB("fleet"); err != nil {
		return Result{}, err
	}
	url := pg.URL("fleet")
	admin, err := sql.Open("pgx", url)
	if err != nil {
		return Result{}, err
	}
	defer admin.Close()
	admin.SetMaxOpenConns(1)
	admin.SetConnMaxIdleTime(0)
	hosts, err := startHosts(cfg, url)
	defer hosts.stop()
	if err != nil {
		return Result{}, err
	}
	if err := waitUp(admin, cfg.Hosts, 60*time.Second); err != nil {
		return Result{}, err
	}
	fmt.Fprintf(cfg.Log, "%d hosts up\n", cfg.Hosts)
	return measure(cfg, pg, admin, hosts)
}

// measure samples the server around the window's slots and reads the
// history of them.
func measure(cfg Config, pg *sqltest.Postgres, admin *sql.DB, hosts *fleet) (Result, error) {
	// The window's slots are the periods' starts in [first, first+D); the
	// samples are half a period before each end, when nothing fires.
	first := time.Now().Add(3 * time.Second).Truncate(cfg.Every).Add(cfg.Every)
	t0 := first.Add(-cfg.Every / 2)
	time.Sleep(time.Until(t0))
	cpu0, err := serverCPU(pg.Dir())
	if err != nil {
		return Result{}, err
	}
	time.Sleep(time.Until(t0.Add(cfg.Duration)))
	cpu1, err := serverCPU(pg.Dir())
	if err != nil {
		return Result{}, err
	}
	t1 := time.Now()
	time.Sleep(3 * time.Second) // the last records are shipped
	r := Result{Hosts: cfg.Hosts, Jobs: cfg.Jobs, Slots: cfg.Jobs * int(cfg.Duration/cfg.Every), ServerCPU: cpu1 - cpu0}
	if r.Connections, err = connections(filepath.Join(pg.Dir(), "server.log"), t0, t1); err != nil {
		return r, err
	}
	if err := slotCounts(admin, first, first.Add(cfg.Duration), &r); err != nil {
		return r, err
	}
	if r.SkipReasons, err = skipReasons(admin, first, first.Add(cfg.Duration)); err != nil {
		return r, err
	}
	r.Audit = hosts.audit(time.Since(hosts.started) + time.Minute)
	return r, nil
}

// waitUp waits until n hosts have beaten within the last 2 s, and then
// for three more beats, so that every host has read a view of them all.
func waitUp(db *sql.DB, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var up int
		err := db.QueryRow(`SELECT count(*) FROM cronvisor_hosts WHERE last_beat > now() - interval '2 seconds'`).Scan(&up)
		if err == nil && up == n {
			time.Sleep(3 * time.Second)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("fleetbench: %d of %d hosts up after %v (%v)", up, n, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// slotCounts reads the records of the slots in [from, to) into r.
func slotCounts(db *sql.DB, from, to time.Time, r *Result) error {
	rows, err := db.Query(`SELECT count(*), count(*) FILTER (WHERE outcome = 'skipped'),
			count(*) FILTER (WHERE outcome <> 'skipped')
		FROM cronvisor_runs WHERE NOT manual AND scheduled_at >= $1 AND scheduled_at < $2
		GROUP BY job, scheduled_at`, from.UnixNano(), to.UnixNano())
	if err != nil {
		return fmt.Errorf("fleetbench: read the slots: %w", err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var records, skips, runs int
		if err := rows.Scan(&records, &skips, &runs); err != nil {
			return err
		}
		r.Records += records
		r.Skips += skips
		switch {
		case runs == 1:
			r.RunOnce++
		case runs > 1:
			r.Twice++
		}
		if runs > 0 {
			seen++
		}
	}
	r.Missed = r.Slots - seen
	return rows.Err()
}

// skipReasons counts the skip records of the slots in [from, to) by the
// first three words of their reason.
func skipReasons(db *sql.DB, from, to time.Time) (map[string]int, error) {
	rows, err := db.Query(`SELECT array_to_string((regexp_split_to_array(reason, ' '))[1:3], ' '), count(*)
		FROM cronvisor_runs WHERE NOT manual AND outcome = 'skipped' AND scheduled_at >= $1 AND scheduled_at < $2
		GROUP BY 1`, from.UnixNano(), to.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("fleetbench: read the skips: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var reason string
		var n int
		if err := rows.Scan(&reason, &n); err != nil {
			return nil, err
		}
		out[reason] = n
	}
	return out, rows.Err()
}

// mkdir makes dir and returns it.
func mkdir(dir string) (string, error) { return dir, os.MkdirAll(dir, 0o755) }
