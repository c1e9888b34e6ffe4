// Package daemon runs a supervisor over one jobs.yaml: scheduler, history,
// housekeeping, the watcher of jobs.yaml and the control socket. Both
// `cronvisor daemon` and the embedded console run one. A Daemon owns every
// goroutine it starts: New starts them, Run serves reloads and signals,
// and Shutdown stops them in order, waiting for each, so that nothing
// writes to history after the store has closed.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"cronvisor/internal/base/exepages"
	"cronvisor/internal/base/heapfloor"
	"cronvisor/internal/base/ratelog"
	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/daemon/service"
	"cronvisor/internal/observe/outlog"
	"cronvisor/internal/store/fleet"
	"cronvisor/runner"
)

// Daemon is a running supervisor.
type Daemon struct {
	o       Options
	log     *slog.Logger
	env     *Env
	sched   *runner.Scheduler
	svc     *service.Service
	current atomic.Pointer[config.Config]
	shared  *fleet.Store // the fleet's shared history; nil without history_backend postgres

	// ctx ends firing, housekeeping and the watcher; the control socket
	// outlives it (see socket).
	ctx           context.Context
	stop          context.CancelFunc
	reloads       chan chan error
	changed       chan struct{}
	schedDone     chan struct{}
	settleDone    chan struct{} // settleMemory's end
	housekeepDone chan struct{}
	watchDone     <-chan struct{} // nil when jobs.yaml is not watched
	socket        *socket         // nil when this daemon serves no socket
	guard         *dirGuard       // nil when the state dir is not watched
	stopped       bool
	// stopping is set once shutdown begins: the watchdog then pings
	// without asking the stopped scheduler, as shutdown_grace (and the
	// unit's TimeoutStopSec) bounds the drain, not the watchdog.
	stopping     atomic.Bool
	stopWatchdog func()
}

// New starts scheduling cfg's jobs (loaded from o.ConfigPath), with
// housekeeping, the watcher of jobs.yaml and the control socket.
func New(cfg *config.Config, o Options) (*Daemon, error) {
	shed(cfg)
	o = o.withDefaults()
	up := o.Clock.Now() // a slot due from here on is not missed while down
	d := &Daemon{log: o.Log, reloads: make(chan chan error), changed: make(chan struct{}, 1)}
	m := d.newMetrics(cfg, o)
	if m != nil {
		o.deliveries = m.Delivered
	}
	d.o = o
	e, err := Open(cfg, o)
	if err != nil {
		return nil, err
	}
	d.env = e
	ln, err := d.claimSocket(cfg)
	if err != nil {
		e.Close()
		return nil, err
	}
	d.current.Store(cfg)
	d.keepApplied(cfg)
	d.listenLogs()
	// History is read once for both: the scheduler's catch_up and the
	// status each job starts with.
	recent := service.ReadRecent(context.Background(), e.Store, cfg.Jobs)
	d.shared = d.startFleet(cfg)
	d.sched = runner.NewScheduler(e.Supervisor, e.Supervisor.Clock(), e.Emit, schedulerOptions(e, recent, d.shared, up)...)
	if err := d.serveMetrics(cfg, m); err != nil {
		if ln != nil {
			ln.Close()
		}
		e.Close()
		return nil, err
	}
	if err := d.newService(cfg, recent); err != nil {
		d.log.Error("saved pauses not restored; every job runs unpaused", "err", err)
	}
	e.Listen(d.svc.Handle)
	scheduledAt := o.Clock.Now() // the instant before the scheduler starts
	d.startParts(cfg, ln)
	d.log.Info("cronvisor started", "config", cfg.Path, "state_dir", cfg.StateDir, "jobs", len(cfg.Jobs), "pid", os.Getpid(),
		"durability", cfg.Durability.String())
	d.log.Info("containment: " + e.Supervisor.Containment())
	o.Notify.Ready()
	d.stopWatchdog = o.Notify.Watchdog(func() bool { return d.stopping.Load() || d.sched.Awake(o.Clock.Now(), healthSlack) })
	d.recordSchedules(cfg, scheduledAt)
	d.settleDone = d.start("memory settling", d.settleMemory)
	return d, nil
}

// shed drops from cfg, before it is shared, what a running daemon never
// reads: where each job's keys were written, which Load's problems have
// already named and only the commands' messages use. With thousands of
// jobs it is a sixth of the loaded heap.
func shed(cfg *config.Config) { cfg.Source.Jobs = nil }

// settleWait bounds how long start-up waits for the scheduler's first
// build before it hands memory back (settleMemory).
const settleWait = 10 * time.Second

// settleMemory hands back to the system what start-up no longer needs,
// once the last of it is done (the scheduler's build of its heap, the
// schedules' record): parsing jobs.yaml builds a node tree several times
// the size of the jobs, so a resident daemon's RSS is then its live heap
// rather than what minutes of scavenging leave; and the executable's
// start-up pages.
func (d *Daemon) settleMemory() {
	select {
	case <-d.sched.Began():
	case <-d.ctx.Done():
		return
	case <-time.After(settleWait):
	}
	debug.FreeOSMemory()
	d.releaseStartupPages()
	// From here the heap holds the jobs and what fires leave; what a fire
	// allocates is garbage by its end. Start-up is left out: its garbage
	// would grow into fresh pages, which cost more than the marking.
	stop := heapfloor.Hold(gcFloor)
	<-d.ctx.Done()
	stop()
}

// gcFloor is the allocation, beyond the live heap, that the collector
// waits for between two cycles once the daemon is up (heapfloor): with
// the default percentage a busy daemon's small live heap made a cycle
// of every few megabytes of fires.
const gcFloor = 8 << 20

// releaseStartupPages hands back the mappings of the executable's pages
// that start-up touched (the initialisers, jobs.yaml's decoding): most of
// the binary, which an idle daemon would otherwise hold resident; what
// runs again faults its pages back in. See exepages.
func (d *Daemon) releaseStartupPages() {
	if n, err := exepages.Release(); err != nil {
		d.log.Warn("the executable's start-up pages stay mapped", "err", err)
	} else {
		d.log.Debug("released the executable's start-up pages", "mapped_bytes", n)
	}
}

// startParts starts what runs for the daemon's life, each owned by it:
// the fleet peer, the scheduler, housekeeping, the control socket on ln
// and the watcher of jobs.yaml.
func (d *Daemon) startParts(cfg *config.Config, ln net.Listener) {
	e, o := d.env, d.o
	var shared sharedPruner
	if d.shared != nil { // history_backend postgres: heartbeats and the closing of lost hosts' runs
		e.startFleetPeer(d.shared, o.Clock)
		e.startOwnership(d.shared, o.Clock, d.current.Load)
		shared = d.shared
	}
	d.ctx, d.stop = context.WithCancel(context.Background())
	d.schedDone = d.start("scheduler", func() { d.sched.Run(d.ctx, cfg.Jobs) })
	d.housekeepDone = d.start("housekeeping", func() { e.housekeep(d.ctx, o.Clock, d.current.Load, shared) })
	d.socket = d.serve(ln)
	d.guard = d.guardStateDir(cfg.StateDir, ln != nil)
	if o.ConfigPath != "" {
		var err error
		if d.watchDone, err = watchConfig(d.ctx, o.ConfigPath, d.changed); err != nil {
			d.log.Warn("not watching jobs.yaml for changes; SIGHUP still reloads", "err", err)
		} else {
			d.log.Debug("started", "part", "watcher")
		}
	}
}

// newService makes the daemon's service, with the fleet's shared history
// when there is one; an error is the saved pauses', beside a working
// service.
func (d *Daemon) newService(cfg *config.Config, recent service.StoredRuns) error {
	e := d.env
	opts := []service.Option{service.WithScheduler(d.sched), service.WithStore(e.Store),
		service.WithRecent(recent), service.WithReload(d.Reload), service.WithAlerts(e.Notifier.Describe),
		service.WithHistoryHealth(func() string { return e.History.Health().String() }),
		service.WithAdopted(e.Recovery.Adopted), service.WithSilentKeepers(e.Recovery.Silent),
		service.WithDurations(e.Learner.StatsOf), service.WithSemaphores(e.Resources)}
	if d.shared != nil {
		opts = append(opts, service.WithShared(d.shared), service.WithHosts(d.shared.Host(), fleetHosts(d.shared)))
	}
	var err error
	d.svc, err = service.New(e.Supervisor, e.Locker, cfg, opts...)
	return err
}

// schedulerOptions are where start-up finds each job's last slot: the
// history read, and the lock backend's slot ledger where every host
// shares one; since when this daemon is up (up: slots due after it are
// fires its start-up reached late, not missed); and, with a shared
// history, since when live peers have been up, whose slots are theirs
// rather than missed.
func schedulerOptions(e *Env, recent service.StoredRuns, shared *fleet.Store, up time.Time) []runner.SchedulerOption {
	opts := []runner.SchedulerOption{runner.WithLastSlots(recent.LastSlots), runner.WithUpSince(up),
		runner.WithParallelism(func(n int) { runtime.GOMAXPROCS(n) }, runtime.GOMAXPROCS(0))}
	if e.Ledger != nil {
		opts = append(opts, runner.WithLedger(e.Ledger))
	}
	if shared != nil {
		opts = append(opts, runner.WithPeers(func(ctx context.Context) (time.Time, bool, error) {
			ctx, cancel := context.WithTimeout(ctx, peerCallTimeout)
			defer cancel()
			return shared.PeersUpSince(ctx)
		}))
	}
	return opts
}

// listenLogs adds the logs of skips and of the runs' output to the
// fan-out.
func (d *Daemon) listenLogs() {
	skips := ratelog.New(d.log, ratelog.Every)
	d.env.Listen(logEvents(d.log, skips))
	d.env.onClose("skip log", func() error { skips.Close(); return nil })
	out := outlog.New(d.log.Handler())
	d.env.Listen(out.Handle)
	d.env.onClose("outlog", out.Close) // the first to close: runs have ended
}

// start runs f in a goroutine of the daemon's; the channel is closed when
// f has returned.
func (d *Daemon) start(part string, f func()) chan struct{} {
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	d.log.Debug("started", "part", part)
	return done
}

// Service is the daemon's control API, as the socket serves it; the
// embedded console calls it directly.
func (d *Daemon) Service() *service.Service { return d.svc }

// Run serves reloads (a change of jobs.yaml on disk, Reload, SIGHUP)
// until ctx is done or a terminating signal arrives on sigs, and returns
// that signal (nil when ctx ended it). With o.HangUpQuits, SIGHUP is a
// terminating signal too. Call Shutdown after it.
func (d *Daemon) Run(ctx context.Context, sigs <-chan os.Signal) os.Signal {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-d.changed:
			d.log.Info("jobs.yaml changed on disk; reloading")
			_ = d.reload()
		case ch := <-d.reloads:
			ch <- d.reload()
		case sig := <-sigs:
			switch {
			case sig == syscall.SIGHUP && !d.o.HangUpQuits:
				_ = d.reload()
				continue
			case sig == syscall.SIGHUP:
				d.log.Info("terminal closed (SIGHUP); quitting the console and ending its runs")
			case sig == HandOverSignal:
				d.log.Info("handing over: no new fires; running jobs go on with their keepers for the next daemon",
					"signal", sig.String())
			default:
				d.log.Info("stopping: no new fires; waiting for running jobs", "signal", sig.String(),
					"shutdown_grace", d.current.Load().ShutdownGrace.String())
			}
			d.stopping.Store(true)
			d.o.Notify.Stopping()
			return sig
		}
	}
}

// Reload applies jobs.yaml again and returns its problems as an error; an
// invalid file keeps the running jobs. It asks Run's loop, which owns the
// config, and waits for its answer.
func (d *Daemon) Reload(ctx context.Context) error {
	ch := make(chan error, 1)
	select {
	case d.reloads <- ch:
	case <-ctx.Done():
		return ctx.Err()
	case <-d.ctx.Done():
		return errors.New("shutting down")
	}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// reload applies a new jobs.yaml; an invalid one keeps the running jobs.
func (d *Daemon) reload() error {
	d.o.Notify.Reloading()
	defer d.o.Notify.Ready()
	old := d.current.Load()
	cfg, problems := config.Load(d.o.ConfigPath)
	if cfg == nil {
		var msgs []string
		for _, pr := range config.Errors(problems) {
			d.log.Error("reload refused; keeping the running jobs", "problem", pr.String())
			msgs = append(msgs, pr.String())
		}
		d.env.Emit(run.Reload{Time: d.o.Clock.Now(), Jobs: len(old.Jobs), Problems: msgs})
		return fmt.Errorf("jobs.yaml invalid, old jobs kept:\n%s", strings.Join(msgs, "\n"))
	}
	shed(cfg)
	if cfg.StateDir != old.StateDir || cfg.LockBackend != old.LockBackend {
		d.log.Warn("state_dir and lock_backend changes take effect at restart, not on reload")
		cfg.StateDir, cfg.LockBackend = old.StateDir, old.LockBackend
	}
	keepHistoryBackend(d.log, cfg, old)
	if cfg.Durability != old.Durability {
		// The store, the spool and the locker were opened with the old
		// one; switching them under running leases would leave a slot
		// cursor synced or not by whichever mode its lease began in.
		d.log.Warn("durability changes take effect at restart, not on reload",
			"running", old.Durability.String(), "file", cfg.Durability.String())
		cfg.Durability = old.Durability
	}
	defer d.recordSchedules(cfg, d.o.Clock.Now()) // the instant before the scheduler applies cfg
	summary := d.reloadSummary(old, cfg)
	d.resize(cfg) // before the jobs that use them fire
	d.sched.Reload(d.ctx, cfg.Jobs)
	d.current.Store(cfg)
	d.env.setConfig(cfg)
	d.svc.SetConfig(cfg)
	d.keepApplied(cfg)
	d.env.Emit(run.Reload{Time: d.o.Clock.Now(), Jobs: len(cfg.Jobs), Summary: summary})
	d.log.Info("reloaded", "config", cfg.Path, "jobs", len(cfg.Jobs), "change", summary)
	return nil
}
