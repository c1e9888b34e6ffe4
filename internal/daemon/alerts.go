package daemon

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"cronvisor/internal/config"
	"cronvisor/internal/observe/metrics"
	"cronvisor/internal/observe/notify"
)

// notifyFlush bounds how long a stopping supervisor keeps delivering the
// notifications and pings still queued.
const notifyFlush = 5 * time.Second

// healthSlack is how much later than its longest sleep the scheduler loop
// may wake on a loaded machine before /healthz calls it stuck.
const healthSlack = 5 * time.Second

// listenNotifier adds the notifications and pings of the jobs of the
// current config to the fan-out; counted, if not nil, counts each
// delivery's result. Its queues are flushed, within
// notifyFlush, when the env closes: after the runs have ended.
func (e *Env) listenNotifier(log *slog.Logger, counted func(kind, result string)) {
	e.Notifier = notify.New(e.jobLookup(), log, notify.WithCounter(counted))
	e.Listen(e.Notifier.Handle)
	e.onClose("notifications", func() error { e.Notifier.Close(notifyFlush); return nil })
}

// jobLookup finds a job of the current config by name, through an index
// built once per config: events come at every output line.
func (e *Env) jobLookup() func(string) (config.Job, bool) {
	var mu sync.Mutex
	var indexed *config.Config
	var byName map[string]int
	return func(name string) (config.Job, bool) {
		cfg := e.cfg.Load()
		mu.Lock()
		defer mu.Unlock()
		if cfg != indexed {
			indexed, byName = cfg, make(map[string]int, len(cfg.Jobs))
			for i, j := range cfg.Jobs {
				byName[j.Name] = i
			}
		}
		i, ok := byName[name]
		if !ok {
			return config.Job{}, false
		}
		return cfg.Jobs[i], true
	}
}

// metricsAddr is where metrics are served: Options.MetricsAddr over
// metrics.listen, "" for nowhere. A change on reload takes effect at
// restart.
func metricsAddr(cfg *config.Config, o Options) string {
	if o.MetricsAddr != "" {
		return o.MetricsAddr
	}
	return cfg.Metrics.Listen
}

// newMetrics makes the metrics when metricsAddr asks for them, nil
// otherwise. They are made before the Env, whose notifier counts its
// deliveries in them from its construction on; what they read at scrape
// time (the scheduler's next fires, the history writer's failures) exists
// by the time serveMetrics serves them.
func (d *Daemon) newMetrics(cfg *config.Config, o Options) *metrics.Metrics {
	if metricsAddr(cfg, o) == "" {
		return nil
	}
	return metrics.New(metrics.Sources{
		NextFires:     func() map[string]time.Time { return d.sched.NextFires() },
		HistoryFailed: func() int64 { return d.env.History.WriteFailures() },
		LeftToOwner:   leftToOwner(cfg, d),
		Durations:     d.learnedDurations,
		Resources:     func() map[string]int { return d.current.Load().Resources },
		AdoptedSlots:  func() map[string]int { return d.env.Recovery.AdoptedSlots() },
	})
}

// serveMetrics serves m, if any, at /metrics, and /healthz.
func (d *Daemon) serveMetrics(cfg *config.Config, m *metrics.Metrics) error {
	if m == nil {
		return nil
	}
	addr := metricsAddr(cfg, d.o)
	d.env.Listen(m.Handle)
	clk := d.o.Clock
	srv, err := metrics.Serve(addr, m.Handler(func() bool { return d.sched.Awake(clk.Now(), healthSlack) }))
	if err != nil {
		return fmt.Errorf("metrics: cannot listen on %s: %w", addr, err)
	}
	d.env.onClose("metrics", srv.Close)
	d.log.Info("serving metrics", "addr", srv.Addr())
	return nil
}
