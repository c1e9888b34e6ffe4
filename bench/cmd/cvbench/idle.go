package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"cronvisor/internal/base/statedir"
	"cronvisor/internal/store/history" // also registers the "sqlite" driver
)

// idleRun is one measured start and idle span of a daemon.
type idleRun struct {
	ready, settled time.Duration // wall time from exec to "started", and until CPU use stopped
	startCPU       time.Duration // CPU used until settled
	startTicks     time.Duration // the same from /proc/PID/stat
	idleCPU        time.Duration // CPU per minute after settling
	wakeups        float64       // thread wake-ups per minute after settling
	threads        int
	rss, hwm       int64 // KiB at the end of the idle span
}

// idle starts a daemon with o.jobs hourly jobs, reps times, and prints its
// start-up cost and its idle cost per minute.
func idle(o options, w io.Writer) error {
	if o.duration > 8*time.Minute {
		return fmt.Errorf("idle: -duration %v: at most 8m (the jobs' minutes must stay outside the window)", o.duration)
	}
	var runs []idleRun
	for rep := range o.reps {
		r, err := runIdle(o, rep)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	fmt.Fprintf(w, "idle: %d hourly job(s), %d history row(s) per job, idle span %v, %d rep(s)\n",
		o.jobs, o.rowsPerJob, o.duration, o.reps)
	fmt.Fprintf(w, "%-8s %9s %11s %12s %12s %14s %12s %7s %8s %8s\n", "run", "ready ms", "settled ms",
		"start cpu ms", "(stat) ms", "idle cpu ms/min", "wakeups/min", "threads", "RSS MiB", "HWM MiB")
	var cols [9][]float64
	for i, r := range runs {
		v := r.figures()
		printIdle(w, fmt.Sprintf("#%d", i+1), v)
		for k := range v {
			cols[k] = append(cols[k], v[k])
		}
	}
	var m [9]float64
	for k := range cols {
		m[k] = median(cols[k])
	}
	printIdle(w, "median", m)
	return nil
}

// figures are the run's columns: ready, settled, start CPU, the same from
// stat, and idle CPU in ms; wake-ups per minute, threads; RSS and HWM in MiB.
func (r idleRun) figures() [9]float64 {
	return [9]float64{ms(r.ready), ms(r.settled), ms(r.startCPU), ms(r.startTicks), ms(r.idleCPU),
		r.wakeups, float64(r.threads), float64(r.rss) / 1024, float64(r.hwm) / 1024}
}

func printIdle(w io.Writer, label string, v [9]float64) {
	fmt.Fprintf(w, "%-8s %9.1f %11.1f %12.1f %12.0f %14.2f %12.1f %7.0f %8.1f %8.1f\n",
		label, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8])
}

func runIdle(o options, rep int) (idleRun, error) {
	var r idleRun
	dir := filepath.Join(o.dir, fmt.Sprintf("idle-%d", rep+1))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	minute := idleMinutes(time.Now())
	config := filepath.Join(dir, "jobs.yaml")
	if err := writeJobs(config, o.jobs, func(i int) string { return fmt.Sprintf("%d * * * *", minute(i)) },
		jobCommand(o, []string{"/bin/true"}), o); err != nil {
		return r, err
	}
	if o.rowsPerJob > 0 {
		if err := seedHistory(statedir.Dir(filepath.Join(dir, "state")).History(), o.jobs, o.rowsPerJob, minute); err != nil {
			return r, err
		}
	}
	d, err := startDaemon(o.cronvisor, config, dir)
	if err != nil {
		return r, err
	}
	defer func() { _ = d.stop(30 * time.Second) }()
	ready, err := d.waitReady(time.Minute)
	if err != nil {
		return r, err
	}
	r.ready = ready.Sub(d.started)
	start, at, err := settle(d.pid(), 30*time.Second)
	if err != nil {
		return r, err
	}
	r.settled, r.startCPU, r.startTicks = at.Sub(d.started), start.cpu, start.ticks
	if err := r.idleSpan(d.pid(), start, o.duration); err != nil {
		return r, err
	}
	return r, d.stop(30 * time.Second)
}

// idleSpan waits for span after the settled usage start and records the
// idle cost per minute and the memory at its end.
func (r *idleRun) idleSpan(pid int, start usage, span time.Duration) error {
	time.Sleep(span)
	end, err := readUsage(pid)
	if err != nil {
		return err
	}
	perMinute := float64(time.Minute) / float64(span)
	r.idleCPU = time.Duration(float64(end.cpu-start.cpu) * perMinute)
	r.wakeups = float64(end.wakeups-start.wakeups) * perMinute
	r.threads, r.rss, r.hwm = end.threads, end.rss, end.hwm
	return nil
}

// idleMinutes gives job i an hourly minute 10 to 49 minutes after now's,
// so that none fires while an idle span of at most 8 minutes runs.
func idleMinutes(now time.Time) func(i int) int {
	m0 := now.Minute()
	return func(i int) int { return (m0 + 10 + i%40) % 60 }
}

// settle waits until pid has used less than 3 ms of CPU in a quarter of a
// second and returns its usage at the start of that quiet span.
func settle(pid int, timeout time.Duration) (usage, time.Time, error) {
	prev, err := readUsage(pid)
	at := time.Now()
	deadline := at.Add(timeout)
	for time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		u, err := readUsage(pid)
		if err != nil {
			return u, at, err
		}
		if u.cpu-prev.cpu < 3*time.Millisecond {
			return prev, at, nil
		}
		prev, at = u, time.Now()
	}
	return prev, at, err
}

// seedHistory writes rows history rows per job, each job's newest at its
// latest past slot, so that the daemon's start-up reads a realistic store
// and finds no missed fire to record. It writes the runs table of
// history's first migration directly, in one transaction: through the
// Store API each row would be its own synced commit.
func seedHistory(path string, jobs, rows int, minute func(int) int) error {
	st, err := history.Open(path) // creates and migrates the file
	if err != nil {
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO runs (run_id, job, outcome, at, scheduled_at,
		started_at, ended_at, exit_code, host, supervisor_pid) VALUES (?,?,?,?,?,?,?,0,'bench',1)`)
	if err != nil {
		return err
	}
	now := time.Now()
	for i := range jobs {
		last := now.Truncate(time.Hour).Add(time.Duration(minute(i)) * time.Minute)
		if last.After(now) {
			last = last.Add(-time.Hour)
		}
		for k := range rows {
			slot := last.Add(-time.Duration(k) * time.Hour).UnixNano()
			if _, err := stmt.ExecContext(ctx, fmt.Sprintf("seed-%d-%d", i, k), jobName(i), "ok",
				slot, slot, slot, slot+int64(time.Millisecond)); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}
