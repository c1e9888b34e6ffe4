package daemon

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/proc"
	"cronvisor/runner"
)

// HandOverSignal asks a daemon to exit leaving its running jobs to their
// keepers, for the next daemon to adopt (an upgrade): Run returns it, and
// the caller passes ErrHandOver to Shutdown.
const HandOverSignal = syscall.SIGUSR2

// ErrHandOver, as Shutdown's cause, ends no run: each goes on with its
// keeper (proc.ErrDetach), and the next daemon on the state dir adopts it.
var ErrHandOver = proc.ErrDetach

// claimSocket binds the control socket, which makes this the state dir's
// one daemon: the socket's flock is held for the daemon's lifetime, so
// another daemon (or an in-process console) already serving it means
// this one is refused (errAnotherDaemon), before it fires anything. Any
// other failure to bind is logged and the daemon runs without a socket.
func (d *Daemon) claimSocket(cfg *config.Config) (net.Listener, error) {
	path := statedir.Dir(cfg.StateDir).Socket()
	ln, err := d.o.Listen(path)
	if errors.Is(err, ctl.ErrInUse) {
		return nil, anotherDaemon(cfg.StateDir, path)
	}
	if err != nil {
		d.log.Error("control socket unavailable", "err", err)
		return nil, nil
	}
	return ln, nil
}

// anotherDaemon is the refusal of a second daemon on a state dir, naming
// the first by the pid and user serving the socket (asked for a moment:
// the first may be between its flock and its bind).
func anotherDaemon(stateDir, path string) error {
	who := "another cronvisor"
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if pid, uid, err := ctl.Server(path); err == nil {
			who = fmt.Sprintf("another cronvisor (pid %d, user %s)", pid, statedir.UserName(uid))
			break
		}
		if time.Now().After(deadline) {
			break
		}
	}
	return fmt.Errorf("%s already supervises the state dir %s (its control socket %s); one daemon per state dir, "+
		"or every slot would run once and be skipped by the other. To run a second supervisor deliberately, give it "+
		"its own state_dir (with lock_backend redis, mysql or postgres to share the locks); `cronvisor run NAME` "+
		"runs a job beside this one", who, stateDir, path)
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
		d.env.Supervisor.HandingOver()
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
	if d.settleDone != nil {
		<-d.settleDone
	}
	d.endRuns(grace, cause)
	d.guard.stop()
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
	d.env.Supervisor.Close()
	d.log.Debug("stopped", "part", "runs")
}
