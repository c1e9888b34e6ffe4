// Package systemd tells a service manager about the daemon's life over
// NOTIFY_SOCKET (sd_notify(3)): ready, reloading, stopping, and watchdog
// pings while the scheduler is alive. Without NOTIFY_SOCKET, as outside a
// Type=notify unit, every call does nothing.
package systemd

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"golang.org/x/sys/unix"
)

// Notifier sends the daemon's state to the service manager. A nil
// Notifier does nothing, so that callers need no check.
type Notifier struct {
	log  *slog.Logger
	send func(state string) (bool, error)
	// watchdog is WatchdogSec as the manager passed it, 0 when off.
	watchdog time.Duration
}

// New returns a Notifier for this process's environment. NOTIFY_SOCKET
// stays set: the library reads it at each send.
func New(log *slog.Logger) *Notifier {
	n := &Notifier{log: log, send: func(s string) (bool, error) { return daemon.SdNotify(false, s) }}
	d, err := daemon.SdWatchdogEnabled(false)
	if err != nil {
		log.Warn("WATCHDOG_USEC is not usable; no watchdog pings", "err", err)
	}
	n.watchdog = d
	return n
}

// Ready says start-up is complete, or a reload has ended.
func (n *Notifier) Ready() { n.notify(daemon.SdNotifyReady) }

// Reloading says a reload begins; Ready must follow. MONOTONIC_USEC is
// what Type=notify-reload units require and the others accept.
func (n *Notifier) Reloading() {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		n.notify(daemon.SdNotifyReloading)
		return
	}
	n.notify(fmt.Sprintf("%s\nMONOTONIC_USEC=%d", daemon.SdNotifyReloading, ts.Nano()/1000))
}

// Stopping says shutdown begins.
func (n *Notifier) Stopping() { n.notify(daemon.SdNotifyStopping) }

func (n *Notifier) notify(state string) {
	if n == nil {
		return
	}
	if _, err := n.send(state); err != nil {
		n.log.Warn("cannot notify the service manager", "state", state, "err", err)
	}
}

// Watchdog pings the manager every half WatchdogSec while alive says the
// daemon works, until the returned stop is called; stop waits for the
// goroutine. A daemon that stops working gets no ping, so the manager
// restarts it. Without a watchdog it starts nothing.
func (n *Notifier) Watchdog(alive func() bool) (stop func()) {
	if n == nil || n.watchdog <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { n.ping(ctx, n.watchdog/2, alive) })
	return func() { cancel(); wg.Wait() }
}

func (n *Notifier) ping(ctx context.Context, every time.Duration, alive func() bool) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if alive() {
			n.notify(daemon.SdNotifyWatchdog)
		} else {
			n.log.Error("the scheduler loop has not woken for longer than its longest sleep; no watchdog ping")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
