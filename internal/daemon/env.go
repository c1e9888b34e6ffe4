package daemon

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"cronvisor/internal/base/durations"
	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/daemon/owner"
	"cronvisor/internal/daemon/recovery"
	"cronvisor/internal/lock"
	"cronvisor/internal/observe/notify"
	"cronvisor/internal/proc"
	"cronvisor/internal/proc/cgroup"
	"cronvisor/internal/store/history"
	"cronvisor/runner"
)

// Env is what running jobs needs: the lock backend, the event fan-out and
// the supervisor, wired from one config. A daemon runs one; `run NAME`
// uses one for a single fire.
type Env struct {
	*runner.Fanout
	Supervisor *runner.Supervisor
	Locker     lock.Locker
	// Ledger is the lock backend's slot ledger when it keeps one that
	// every host shares (the SQL backends), else nil.
	Ledger  lock.SlotLedger
	Store   *history.Store  // unopened (degraded) when the database could not be opened
	History *history.Writer // the Supervisor's Recorder
	// Recovery records dead supervisors' runs (see package recovery).
	Recovery *recovery.Recoverer
	Notifier *notify.Notifier // notifications and pings of the current config's jobs
	// Owner gives each job's scheduled slots to one live host of the
	// fleet (history_backend postgres), else nil; see owner.go.
	Owner *owner.Gate
	// Resources are the semaphores of jobs.yaml's resources:, which
	// the Supervisor takes slots from; see resources.go.
	Resources *Resources
	// Learner learns what each job's runs take (warn_after and
	// warn_fast: auto, status, metrics); see package durations.
	Learner *durations.Learner
	// relock takes again the locks whose files were deleted with the
	// state dir (file.Locker.Relock); nil for the other backends.
	relock  func() (int, error)
	log     *slog.Logger
	cfg     atomic.Pointer[config.Config] // the current one, for Recovery
	closers []closer                      // in the order opened; Close runs them backwards
}

// closer is one part of an Env or a Daemon to stop, named in the debug
// record that says it stopped.
type closer struct {
	part  string
	close func() error
}

// onClose says that part has started and that Close stops it.
func (e *Env) onClose(part string, f func() error) {
	e.closers = append(e.closers, closer{part, f})
	e.log.Debug("started", "part", part)
}

// Close stops what Open started, the last opened first: the history
// writer commits what it holds before the store closes, and Recovery,
// which writes to the store, stops before either.
func (e *Env) Close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		c := e.closers[i]
		if err := c.close(); err != nil {
			e.log.Debug("stopped", "part", c.part, "err", err)
			continue
		}
		e.log.Debug("stopped", "part", c.part)
	}
	e.closers = nil
}

// Open prepares a supervisor for cfg: this is the one place where the
// parts that run jobs are wired together. Orphans of runs are reparented
// to this process (subreaper) so that no descendant escapes its run's
// deadline. A state dir another user could tamper with is refused first:
// the daemon, the in-process console and `run NAME` all start here, before
// any lock. With locks named, only those of locks/ are checked (see
// statedir.Check). History problems, warnings and the recovery of dead
// supervisors' runs go to o.Log.
func Open(cfg *config.Config, o Options, locks ...string) (*Env, error) {
	o = o.withDefaults()
	log := o.Log
	started := time.Now() // before any lock is taken: see recovery.Config.Started
	if err := statedir.Check(cfg.StateDir, locks...); err != nil {
		return nil, err
	}
	// go-redis has one logger for the whole process, not one per client.
	redis.SetLogger(redisLog{log})
	if err := proc.EnableSubreaper(); err != nil {
		log.Warn("cannot become a child subreaper; orphans of runs may outlive their deadline", "err", err)
	}
	locker, err := o.Locker(cfg)
	if err != nil {
		return nil, err
	}
	e := &Env{Fanout: &runner.Fanout{}, Locker: locker, log: log}
	e.cfg.Store(cfg)
	if c, ok := locker.(io.Closer); ok {
		e.onClose("locker", c.Close)
	}
	prepareLocker(locker, log)
	e.Ledger, _ = locker.(lock.SlotLedger)
	e.relock = relockOf(locker)
	if r, ok := locker.(lock.ClockSkewer); ok {
		warnClockSkew(r, cfg.LockBackend.Type, log)
	}
	e.startReaper()

	starts := &runner.Starts{}
	if err := e.openRecords(cfg, o, starts); err != nil {
		e.Close()
		return nil, err
	}
	store, hist := e.Store, e.History
	hier, noCgroup := cgroup.Detect()
	e.Learner = e.newLearner(store, o.Clock.Now)
	// Before Recovery, which lists their slots (and stops first).
	if e.Resources, err = openResources(cfg); err != nil {
		e.Close()
		return nil, err
	}
	e.onClose("resources", e.Resources.Close)
	e.Recovery = e.newRecovery(store, hist.InFlight, started, hier, log)
	e.onClose("recovery", func() error { e.Recovery.Close(); return nil })
	e.Locker = e.Recovery.Locker() // every record a fire reads reaches Recovery
	e.listenNotifier(log, o.deliveries)
	opts := []runner.Option{runner.WithLastOK(store.LastOKSlot), runner.WithStarts(starts),
		runner.WithLogger(log), runner.WithSecretEnv(cfg.SecretEnv...), runner.WithClock(o.Clock),
		runner.WithKeepers(cfg.StateDir), runner.WithDurability(cfg.Durability), runner.WithAdopter(e.Recovery),
		runner.WithLogLimit(cfg.History.LogLimit), runner.WithLearner(e.Learner)}
	opts = append(opts, runner.WithCgroup(hier, noCgroup))
	opts = append(opts, e.Resources.supervisorOptions()...)
	opts = append(opts, e.ownership(cfg, o.Clock)...)
	e.Supervisor = runner.NewSupervisor(e.Locker, hist, e.Emit, opts...)
	return e, nil
}

// openRecords opens the history store and its writer, the Supervisor's
// Recorder, which starts with the records of dead processes' spools. A
// store that cannot be opened leaves the writer degraded: jobs still
// run, their records wait until the store opens.
func (e *Env) openRecords(cfg *config.Config, o Options, starts *runner.Starts) error {
	store, openErr := openHistory(statedir.Dir(cfg.StateDir).History(), o.OpenStore, cfg.Durability, e.log)
	if store == nil {
		return openErr
	}
	e.Store = store
	e.onClose("history", store.Close)
	spool, adopted := openSpools(store, cfg.StateDir, cfg.Durability, e.log)
	hist := history.NewWriter(history.WriterConfig{Store: store, StateDir: cfg.StateDir,
		LogLimit: cfg.History.LogLimit, Log: e.log, Pending: starts.Pending, Spool: spool, Adopted: adopted})
	if openErr != nil {
		hist.Degrade(openErr)
	}
	e.History = hist
	e.onClose("history writer", hist.Close)
	return nil
}

// prepareLocker gives the locker the log for its own trouble and replays
// its journals, before it takes any lock.
func prepareLocker(locker lock.Locker, log *slog.Logger) {
	if l, ok := locker.(lock.Logged); ok {
		l.LogTo(log)
	}
	if r, ok := locker.(lock.Replayer); ok {
		replayJournals(r, log)
	}
}

// replayJournals puts the lock records that dead processes' journals
// hold back into the lock files, before Recovery and the first fire read
// them. A journal that cannot be replayed stays for the next process.
func replayJournals(r lock.Replayer, log *slog.Logger) {
	n, err := r.Replay()
	if err != nil {
		log.Warn("locks: a cursor journal left by a dead process could not be replayed; it stays for the next start", "err", err)
	}
	if n > 0 {
		log.Warn("locks: lock records put back from a dead process's cursor journal (the machine crashed)", "locks", n)
	}
}

// startReaper reaps the orphans of runs (this process is their
// subreaper) until the env is closed.
func (e *Env) startReaper() {
	reapCtx, stopReaper := context.WithCancel(context.Background())
	waitReaper := proc.StartReaper(reapCtx)
	e.onClose("reaper", func() error { stopReaper(); waitReaper(); return nil })
}

// setConfig tells the env about a reloaded config.
func (e *Env) setConfig(cfg *config.Config) { e.cfg.Store(cfg) }

// openSpools adopts the history spools that dead processes left in the
// state dir and creates this process's own. The adopted writes are made
// here, before the recovery of dead supervisors' runs can close one of
// those runs as interrupted; should the store fail, they go first in the
// Writer. A spool that cannot be created leaves held records in memory
// only, as without spools: the daemon still runs.
func openSpools(store *history.Store, stateDir string, d run.Durability, log *slog.Logger) (*history.Spool, *history.Adopted) {
	dir := statedir.Dir(stateDir).Spool()
	adopted, err := history.AdoptSpools(dir)
	if err != nil {
		log.Warn("history: a spool left by a dead supervisor cannot be read; it stays where it is", "err", err)
	}
	if n := len(adopted.Writes); n > 0 {
		log.Warn("history: writing the records a dead supervisor left in its spool", "records", n)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if adopted.WriteTo(ctx, store) {
			adopted = nil
		}
		cancel()
	}
	spool, err := history.CreateSpool(dir, history.SpoolSize, history.WithSpoolDurability(d))
	if err != nil {
		log.Warn("history: no spool: records held while the store fails are kept in memory only", "err", err)
		return nil, adopted
	}
	return spool, adopted
}
