package daemon

import (
	"context"
	"errors"
	"syscall"
	"time"

	"cronvisor/config"
	"cronvisor/ctl"
	"cronvisor/proc"
	"cronvisor/runner"
)

// HandOverSignal asks a daemon to exit leaving its running jobs to their
// keepers, for the next daemon to adopt (an upgrade): Run returns it, and
// the caller passes ErrHandOver to Shutdown.
const HandOverSignal = syscall.SIGUSR2

// ErrHandOver, as Shutdown's cause, ends no run: each goes on with its
// keeper (proc.ErrDetach), and the next daemon on the state dir adopts it.
var ErrHandOver = proc.ErrDetach

// socket is the control socket's server goroutine.
type socket struct {
	stop context.CancelFunc
	done chan struct{}
}

// listen serves the control socket unless another daemon already does:
// several daemons may share a state dir (the locks keep them from
// overlapping); the first serves the socket, the others run without one.
// The socket has a context of its own, not d.ctx: consoles and status
// watch the drain at shutdown, so it is served until the runs have ended.
func (d *Daemon) listen(cfg *config.Config) *socket {
	path := SocketPath(cfg)
	ln, err := d.o.Listen(path)
	if errors.Is(err, ctl.ErrInUse) {
		d.log.Warn("another cronvisor serves this state dir's control socket; running without one (locks still exclude overlaps)", "socket", path)
		return nil
	}
	if err != nil {
		d.log.Error("control socket unavailable", "err", err)
		return nil
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &socket{stop: stop}
	s.done = d.start("socket", func() {
		if err := ctl.Serve(ctx, ln, d.svc, d.log); err != nil {
			d.log.Error("control socket stopped", "err", err)
		}
	})
	return s
}

// Shutdown stops firing and stops the daemon. With cause nil it lets the
// running jobs finish within shutdown_grace, then ends them like a timeout
// (runner.ErrShutdown); with a cause it ends them at once with it. Then it
// stops, in order and waiting for each: the control socket, housekeeping,
// the watcher, and the parts Open wired (see Env.Close). Call it from one
// goroutine, after Run has returned; a second call does nothing.
func (d *Daemon) Shutdown(cause error) {
	if d.stopped {
		return
	}
	d.stopped = true
	d.stopping.Store(true)
	grace := d.current.Load().ShutdownGrace
	if errors.Is(cause, proc.ErrDetach) {
		grace = 0 // HandOver: no run is ended, every run is left to its keeper
	} else if cause != nil {
		d.log.Info("stopping: ending running jobs now", "cause", cause.Error())
		grace = 0
	} else {
		cause = runner.ErrShutdown
	}
	d.svc.Drain()
	d.stop()
	<-d.schedDone
	d.log.Debug("stopped", "part", "scheduler")
	d.endRuns(grace, cause)
	if d.socket != nil {
		d.socket.stop()
		<-d.socket.done
		d.log.Debug("stopped", "part", "socket")
	}
	<-d.housekeepDone
	d.log.Debug("stopped", "part", "housekeeping")
	if d.watchDone != nil {
		<-d.watchDone
		d.log.Debug("stopped", "part", "watcher")
	}
	d.env.Close()
	d.stopWatchdog()
	d.log.Info("cronvisor stopped")
}

// endRuns waits up to grace for the runs in flight, then ends what is left
// with cause and waits for those too.
func (d *Daemon) endRuns(grace time.Duration, cause error) {
	allDone := make(chan struct{})
	go func() { d.sched.WaitAll(); d.svc.Wait(); close(allDone) }()
	if grace > 0 {
		t := d.o.Clock.NewTimer(grace)
		select {
		case <-allDone:
		case <-t.C():
			d.log.Warn("shutdown_grace exceeded; ending running jobs like a timeout")
		}
		t.Stop()
	}
	d.env.Supervisor.KillAll(cause) // no-op when every run has ended
	<-allDone
	d.log.Debug("stopped", "part", "runs")
}
