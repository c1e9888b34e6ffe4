package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"cronvisor/config"
	"cronvisor/ctl"
	"cronvisor/outlog"
	"cronvisor/runner"
	"cronvisor/service"
)

// process is a running supervisor: scheduler, history, control socket. The
// daemon and the embedded console both run one.
type process struct {
	g       *globals
	log     *slog.Logger
	env     *env
	sched   *runner.Scheduler
	svc     *service.Service
	current atomic.Pointer[config.Config]

	ctx       context.Context
	stop      context.CancelFunc
	schedDone chan struct{}
	reloads   chan chan error
	changed   chan struct{}
	socket    net.Listener // nil when another daemon serves the state dir's socket
	serveDone chan struct{}
	// stopServing ends the control socket, which outlives p.ctx: consoles
	// and status watch the drain at shutdown.
	stopServing context.CancelFunc
	// housekeepDone is closed when housekeeping, which writes history,
	// has returned: the store closes after.
	housekeepDone chan struct{}
}

func socketPath(cfg *config.Config) string { return filepath.Join(cfg.StateDir, "cronvisor.sock") }

// startupHeapLimit bounds the heap while pauseGC holds the collector off.
const startupHeapLimit = 512 << 20

// pauseGC turns the collector off, up to startupHeapLimit, until the
// returned func turns it back on. Parsing jobs.yaml grows a node tree of
// several times the jobs' size (60 MiB for 10,000 jobs) that is garbage
// once decoded: collections while it grows each marked all of it again,
// about 40 ms of a 10,000-job start-up's CPU; with the collector off, the
// FreeOSMemory at the end of startProcess marks only what survives.
func pauseGC() (resume func()) {
	percent := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(startupHeapLimit)
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
}

// startProcess starts scheduling cfg's jobs.
func startProcess(g *globals, log *slog.Logger, cfg *config.Config) (*process, error) {
	redis.SetLogger(redisLog{log})
	e, err := openEnv(cfg, log, g.stderr)
	if err != nil {
		return nil, err
	}
	p := &process{g: g, log: log, env: e, schedDone: make(chan struct{}),
		reloads: make(chan chan error), changed: make(chan struct{}, 1)}
	p.current.Store(cfg)
	e.Listen(logEvents(log))
	out := outlog.New(log.Handler())
	e.Listen(out.Handle)
	e.closers = append(e.closers, out.Close) // the first to close: runs have ended
	p.sched = runner.NewScheduler(e.Supervisor, e.Supervisor.Clock(), e.Emit, e.schedulerOptions()...)
	if p.svc, err = service.New(e.Supervisor, p.sched, e.Locker, e.Store, cfg, p.requestReload); err != nil {
		log.Error("saved pauses not restored; every job runs unpaused", "err", err)
	}
	p.svc.SetHistoryHealth(func() string { return e.History.Health().String() })
	e.Listen(p.svc.Handle)
	p.ctx, p.stop = context.WithCancel(context.Background())
	go func() { p.sched.Run(p.ctx, cfg.Jobs); close(p.schedDone) }()
	p.housekeepDone = make(chan struct{})
	go func() { e.housekeep(p.ctx, log, p.current.Load); close(p.housekeepDone) }()
	p.listen(cfg)
	if err := watchConfig(p.ctx, g.configPath, p.changed); err != nil {
		log.Warn("not watching jobs.yaml for changes; SIGHUP still reloads", "err", err)
	}
	// Parsing jobs.yaml builds a node tree several times the size of the
	// jobs (60 MiB for 10,000 jobs); hand it back to the system now rather
	// than over minutes of scavenging, so a resident daemon's RSS is its
	// live heap.
	debug.FreeOSMemory()
	log.Info("cronvisor started", "config", cfg.Path, "state_dir", cfg.StateDir, "jobs", len(cfg.Jobs), "pid", os.Getpid())
	return p, nil
}

// listen serves the control socket unless another daemon already does:
// several daemons may share a state dir (the locks keep them from
// overlapping); the first serves the socket, the others run without one.
func (p *process) listen(cfg *config.Config) {
	ln, err := ctl.Listen(socketPath(cfg))
	if errors.Is(err, ctl.ErrInUse) {
		p.log.Warn("another cronvisor serves this state dir's control socket; running without one (locks still exclude overlaps)", "socket", socketPath(cfg))
		return
	}
	if err != nil {
		p.log.Error("control socket unavailable", "err", err)
		return
	}
	p.socket = ln
	p.serveDone = make(chan struct{})
	ctx, stop := context.WithCancel(context.Background())
	p.stopServing = stop
	go func() {
		defer close(p.serveDone)
		if err := ctl.Serve(ctx, ln, p.svc, p.log); err != nil {
			p.log.Error("control socket stopped", "err", err)
		}
	}()
}

// requestReload is the service's reload: it asks the owner of the config
// (the loop in serve) and waits for the answer.
func (p *process) requestReload(ctx context.Context) error {
	ch := make(chan error, 1)
	select {
	case p.reloads <- ch:
	case <-ctx.Done():
		return ctx.Err()
	case <-p.ctx.Done():
		return errors.New("shutting down")
	}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// serve handles reload requests (SIGHUP, a change on disk, the socket)
// until stop is closed or a terminating signal arrives, and returns that
// signal (nil when stop ended it). With hangUpQuits, SIGHUP is a
// terminating signal too: an embedded console's terminal closed.
func (p *process) serve(sigs <-chan os.Signal, stop <-chan struct{}, hangUpQuits bool) os.Signal {
	for {
		select {
		case <-stop:
			return nil
		case <-p.changed:
			p.log.Info("jobs.yaml changed on disk; reloading")
			_ = p.reload()
		case ch := <-p.reloads:
			ch <- p.reload()
		case sig := <-sigs:
			switch {
			case sig == syscall.SIGHUP && !hangUpQuits:
				_ = p.reload()
				continue
			case sig == syscall.SIGHUP:
				p.log.Info("terminal closed (SIGHUP); quitting the console and ending its runs")
			default:
				p.log.Info("stopping: no new fires; waiting for running jobs", "signal", sig.String(),
					"shutdown_grace", p.current.Load().ShutdownGrace.String())
			}
			return sig
		}
	}
}

// reload applies a new jobs.yaml; an invalid one keeps the running jobs.
func (p *process) reload() error {
	old := p.current.Load()
	cfg, problems := config.Load(p.g.configPath)
	if cfg == nil {
		var msgs []string
		for _, pr := range config.Errors(problems) {
			p.log.Error("reload refused; keeping the running jobs", "problem", pr.String())
			msgs = append(msgs, pr.String())
		}
		p.env.Emit(runner.ConfigReloaded{Time: time.Now(), Jobs: len(old.Jobs), Problems: msgs})
		return fmt.Errorf("jobs.yaml invalid, old jobs kept:\n%s", strings.Join(msgs, "\n"))
	}
	if cfg.StateDir != old.StateDir || cfg.LockBackend != old.LockBackend {
		p.log.Warn("state_dir and lock_backend changes take effect at restart, not on reload")
		cfg.StateDir, cfg.LockBackend = old.StateDir, old.LockBackend
	}
	p.sched.Reload(p.ctx, cfg.Jobs)
	p.current.Store(cfg)
	p.env.setConfig(cfg)
	p.svc.SetConfig(cfg)
	p.env.Emit(runner.ConfigReloaded{Time: time.Now(), Jobs: len(cfg.Jobs)})
	p.log.Info("reloaded", "config", cfg.Path, "jobs", len(cfg.Jobs))
	return nil
}

// shutdown stops firing, lets running jobs finish within shutdown_grace,
// then ends them like a timeout.
func (p *process) shutdown() {
	p.shutdownAfter(p.current.Load().ShutdownGrace, runner.ErrShutdown)
}

// shutdownNow stops firing and ends running jobs at once, like a timeout.
func (p *process) shutdownNow(cause error) {
	p.log.Info("stopping: ending running jobs now", "cause", cause.Error())
	p.shutdownAfter(0, cause)
}

// shutdownAfter stops firing, waits up to grace for the runs in flight,
// then ends what is left with cause. The control socket is served until
// then, so that consoles and status see the drain.
func (p *process) shutdownAfter(grace time.Duration, cause error) {
	p.svc.Drain()
	p.stop()
	<-p.schedDone
	allDone := make(chan struct{})
	go func() { p.sched.WaitAll(); p.svc.Wait(); close(allDone) }()
	if grace > 0 {
		select {
		case <-allDone:
		case <-time.After(grace):
			p.log.Warn("shutdown_grace exceeded; ending running jobs like a timeout")
		}
	}
	p.env.Supervisor.KillAll(cause) // no-op when every run has ended
	<-allDone
	p.stopSocket()
	<-p.housekeepDone
	p.env.Close()
	p.log.Info("cronvisor stopped")
}

// stopSocket stops serving the control socket and waits for it; a second
// call does nothing.
func (p *process) stopSocket() {
	if p.serveDone == nil {
		return
	}
	p.stopServing()
	<-p.serveDone
	p.serveDone = nil
}
