package daemon

import (
	"fmt"
	"log/slog"
	"net"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/backends"
	"cronvisor/internal/observe/systemd"
	"cronvisor/internal/store/history"
	"cronvisor/runner"
)

// Options are what a supervisor takes from its caller: where jobs.yaml is,
// the one logger, and the side effects that tests replace. A zero field
// gets the real thing.
type Options struct {
	// ConfigPath is the jobs.yaml that a reload reads and a daemon
	// watches (New and Open take the config already loaded from it).
	ConfigPath string
	// Log receives every record, warnings included; nil discards.
	Log *slog.Logger
	// HangUpQuits makes SIGHUP a terminating signal of Run instead of a
	// reload: an embedded console's terminal closed.
	HangUpQuits bool
	// MetricsAddr serves /metrics and /healthz there, over the config's
	// metrics.listen (daemon --metrics-addr).
	MetricsAddr string
	// Notify tells a service manager (systemd) about start-up, reloads
	// and shutdown, and pings its watchdog; nil tells nobody.
	Notify *systemd.Notifier

	// Clock is the supervisor's, the housekeeping's and shutdown_grace's.
	Clock clock.Clock
	// Locker opens the lock backend (default NewLocker).
	Locker func(*config.Config) (lock.Locker, error)
	// OpenStore opens the history database at a path (default
	// history.Open); see openHistory for what a failure does.
	OpenStore func(path string, opts ...history.StoreOption) (*history.Store, error)
	// Listen listens on the control socket's path (default ctl.Listen).
	Listen func(path string) (net.Listener, error)

	// deliveries counts each notification's and ping's result (the
	// metrics', which New makes before Open); nil counts nothing.
	deliveries func(kind, result string)
}

func (o Options) withDefaults() Options {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Locker == nil {
		o.Locker = NewLocker
	}
	if o.OpenStore == nil {
		o.OpenStore = history.Open
	}
	if o.Listen == nil {
		o.Listen = ctl.Listen
	}
	return o
}

// NewLocker returns the configured lock backend, from the one list.
func NewLocker(cfg *config.Config) (lock.Locker, error) {
	lb := cfg.LockBackend
	l, err := backends.Open(lb.Type, lock.Settings{URL: lb.URL, TTL: lb.TTL, Prefix: lb.Prefix,
		LocksDir: statedir.Dir(cfg.StateDir).Locks(), CursorsDir: statedir.Dir(cfg.StateDir).Cursors(), InRun: runner.InRun, Durability: cfg.Durability})
	if err != nil {
		return nil, backendErr(cfg, err)
	}
	return l, nil
}

// backendErr places a lock backend's error at its key in the file.
func backendErr(cfg *config.Config, err error) error {
	return fmt.Errorf("%s:%d:%d: lock_backend: %w", cfg.Path, cfg.LockBackend.Line, cfg.LockBackend.Col, err)
}

// The lock backends are registered for config.Load here, where every
// command that loads jobs.yaml passes (cli imports daemon): config may not
// import lock itself.
func init() {
	for _, b := range backends.All {
		config.RegisterLockBackends(b)
	}
}
