package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"cronvisor/config"
	"cronvisor/history"
	"cronvisor/lock"
	"cronvisor/proc"
	"cronvisor/recovery"
	"cronvisor/runner"
	"cronvisor/statedir"
)

// env is what running jobs needs: the lock backend, the event fan-out and
// the supervisor, wired from one config.
type env struct {
	*runner.Fanout
	Supervisor *runner.Supervisor
	Locker     lock.Locker
	Store      *history.Store  // nil when the history store could not be opened
	History    *history.Writer // the Supervisor's Recorder
	// Recovery records dead supervisors' runs (see package recovery).
	Recovery  *recovery.Recoverer
	cfg       atomic.Pointer[config.Config] // the current one, for Recovery
	closers   []func() error
	schedOpts []runner.SchedulerOption
}

func (e *env) Close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		_ = e.closers[i]()
	}
}

// newLocker returns the configured lock backend.
func newLocker(cfg *config.Config) (lock.Locker, error) {
	switch cfg.LockBackend.Type {
	case "", "file":
		return lock.NewFileLocker(filepath.Join(cfg.StateDir, "locks")), nil
	case "redis":
		l, err := lock.NewRedisLocker(cfg.LockBackend.URL, cfg.LockBackend.TTL)
		if err != nil {
			return nil, fmt.Errorf("%s:%d:%d: lock_backend: %w", cfg.Path, cfg.LockBackend.Line, cfg.LockBackend.Col, err)
		}
		return l, nil
	}
	return nil, fmt.Errorf("unknown lock backend %q", cfg.LockBackend.Type)
}

// openEnv prepares a supervisor for cfg. Orphans of runs are reparented to
// this process (subreaper) so that no descendant escapes its run's deadline.
// A state dir another user could tamper with is refused first: the daemon,
// the in-process console and `run NAME` all start here, before any lock.
// With locks named, only those of locks/ are checked (see statedir.Check).
// History problems and the recovery of dead supervisors' runs go to log.
func openEnv(cfg *config.Config, log *slog.Logger, stderr io.Writer, locks ...string) (*env, error) {
	started := time.Now() // before any lock is taken: see recovery.Config.Started
	if err := statedir.Check(cfg.StateDir, locks...); err != nil {
		return nil, err
	}
	if err := proc.EnableSubreaper(); err != nil {
		fmt.Fprintln(stderr, "cronvisor: warning: cannot become a child subreaper:", err)
	}
	locker, err := newLocker(cfg)
	if err != nil {
		return nil, err
	}
	reapCtx, stopReaper := context.WithCancel(context.Background())
	proc.StartReaper(reapCtx)
	e := &env{Fanout: &runner.Fanout{}, Locker: locker}
	e.cfg.Store(cfg)
	if c, ok := locker.(io.Closer); ok {
		e.closers = append(e.closers, c.Close)
	}
	if r, ok := locker.(*lock.RedisLocker); ok {
		warnClockSkew(r, stderr)
	}
	e.closers = append(e.closers, func() error { stopReaper(); return nil })

	store, openErr := openHistory(historyPath(cfg), log)
	if store == nil {
		e.Close()
		return nil, openErr
	}
	e.Store = store
	store.OnReopen(func(path, setAside string) {
		if setAside != "" {
			log.Warn("history: the database file was replaced by one that is no database; moved it aside and started a new one", "path", path, "moved_to", setAside)
			return
		}
		log.Warn("history: the database file was deleted or replaced; writing to the one now at its path", "path", path)
	})
	e.closers = append(e.closers, store.Close)
	starts := &runner.Starts{}
	hist := history.NewWriter(history.WriterConfig{Store: store, StateDir: cfg.StateDir,
		LogLimit: cfg.History.LogLimit, Log: log, Pending: starts.Pending})
	if openErr != nil {
		// Jobs still run: their records wait until the store opens.
		hist.Degrade(openErr)
	}
	e.History = hist
	e.closers = append(e.closers, hist.Close)
	e.Recovery = e.newRecovery(store, hist.InFlight, started, log)
	e.closers = append(e.closers, func() error { e.Recovery.Close(); return nil })
	e.Locker = e.Recovery.Locker() // every record a fire reads reaches Recovery
	opts := []runner.Option{runner.WithLastOK(store.LastOKSlot), runner.WithStarts(starts),
		runner.WithLogger(log), runner.WithSecretEnv(cfg.SecretEnv...)}
	e.schedOpts = append(e.schedOpts, runner.WithLastSlots(store.LastSlots))
	e.Supervisor = runner.NewSupervisor(e.Locker, hist, e.Emit, opts...)
	return e, nil
}

// openHistory opens the history store at path. A file there that is not a
// database is moved aside (history.db.corrupt-TIMESTAMP) and a new one
// started: what an operator wants at 3 a.m. is jobs recorded again, with the
// old file kept for a post-mortem. A store that cannot be opened at all
// (a read-only or full state dir) is returned unopened with the error; its
// first write that succeeds opens it.
func openHistory(path string, log *slog.Logger) (*history.Store, error) {
	store, err := history.Open(path)
	if errors.Is(err, history.ErrNotDatabase) {
		to, aerr := history.SetAside(path, time.Now())
		if aerr != nil {
			log.Error("history: the database is unusable and cannot be moved aside", "path", path, "err", err, "move_err", aerr)
		} else {
			log.Warn("history: the database was unusable; moved it aside and started a new one", "path", path, "moved_to", to, "err", err)
			store, err = history.Open(path)
		}
	}
	if err == nil {
		return store, nil
	}
	log.Error("history degraded: cannot open the database; jobs keep running and their records wait in memory", "path", path, "err", err)
	store, uerr := history.Unopened(path)
	if uerr != nil {
		return nil, uerr
	}
	return store, err
}

func historyPath(cfg *config.Config) string { return filepath.Join(cfg.StateDir, "history.db") }

// newRecovery returns the recoverer of dead supervisors' runs, judging
// this process by its pid, its start and its runs in flight (mine).
func (e *env) newRecovery(store *history.Store, mine func(runID string) bool, started time.Time, log *slog.Logger) *recovery.Recoverer {
	return recovery.New(recovery.Config{
		Store: store, Locker: e.Locker, Alive: recovery.Supervisors(),
		Self: os.Getpid(), Started: started, Mine: mine,
		LockOf: func(job string) string {
			if j, ok := findJob(e.cfg.Load(), job); ok {
				return j.Lock
			}
			return job
		},
		StateDir: e.cfg.Load().StateDir,
		KeepAge:  func() time.Duration { return e.cfg.Load().History.KeepAge },
		Log:      log,
	})
}

// setConfig tells the env about a reloaded config.
func (e *env) setConfig(cfg *config.Config) { e.cfg.Store(cfg) }

// recoverRuns records the runs that dead supervisors left behind: those
// whose processes are gone now, the others as soon as they are (see
// package recovery).
func (e *env) recoverRuns(ctx context.Context) error {
	if e.Recovery == nil {
		return nil
	}
	_, err := e.Recovery.Sweep(ctx)
	if errors.Is(err, history.ErrUnavailable) {
		return nil // history is degraded, and that is logged once already
	}
	return err
}

// schedulerOptions wires the history store into the scheduler (catch_up).
func (e *env) schedulerOptions() []runner.SchedulerOption { return e.schedOpts }

// recoverEvery is how often a daemon sweeps the lock records and history
// for dead supervisors' runs that no fire came across (a run that a fire
// finds, or that a sweep finds still holding its lock, is recorded as soon
// as its processes let go: see package recovery); pruneEvery how often it
// applies the history retention (a scan of the runs table: not per minute).
// The first prune waits firstPrune: it scans the whole runs table (about
// 70 ms of CPU with 30,000 rows), and a daemon that has just started, or
// is restarted in a loop, should stay cheap.
const (
	recoverEvery = time.Minute
	pruneEvery   = time.Hour
	firstPrune   = 10 * time.Minute
)

// housekeep recovers orphaned runs, at once and then every recoverEvery,
// and prunes history off the scheduler's goroutine, so that neither ever
// delays a fire. It returns when ctx is done.
func (e *env) housekeep(ctx context.Context, log *slog.Logger, current func() *config.Config) {
	if e.Store == nil {
		return
	}
	t := time.NewTicker(recoverEvery)
	defer t.Stop()
	nextPrune := time.Now().Add(firstPrune)
	for {
		cfg := current()
		if err := e.recoverRuns(ctx); err != nil && ctx.Err() == nil {
			log.Error("recording runs of dead supervisors", "err", err)
		}
		if now := time.Now(); !now.Before(nextPrune) {
			nextPrune = now.Add(pruneEvery)
			n, err := e.Store.Prune(ctx, cfg.History.KeepRuns, cfg.History.KeepAge, now)
			if err != nil {
				log.Error("pruning history", "err", err)
			} else if n > 0 {
				log.Info("pruned history", "rows", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// redisLog routes go-redis's own messages (pool dial failures during an
// outage) into the structured log instead of bare stderr lines.
type redisLog struct{ log *slog.Logger }

func (r redisLog) Printf(_ context.Context, format string, v ...any) {
	r.log.Warn("redis: " + fmt.Sprintf(format, v...))
}

// maxClockSkew is how far this host's clock may be from Redis's before
// cronvisor warns: slots are wall-clock instants, so hosts whose clocks
// disagree by more fire the "same" slot at visibly different times.
const maxClockSkew = 500 * time.Millisecond

func warnClockSkew(r *lock.RedisLocker, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	skew, err := r.ClockSkew(ctx)
	switch {
	case err != nil:
		fmt.Fprintln(stderr, "cronvisor: warning: cannot compare clocks with Redis:", err)
	case skew > maxClockSkew || skew < -maxClockSkew:
		fmt.Fprintf(stderr, "cronvisor: warning: this host's clock is %s off Redis's (TIME); fix NTP: slots are wall-clock instants\n", skew)
	}
}
