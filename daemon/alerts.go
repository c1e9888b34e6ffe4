package daemon

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"cronvisor/config"
	"cronvisor/metrics"
	"cronvisor/notify"
)

// notifyFlush bounds how long a stopping supervisor keeps delivering the
// notifications and pings still queued.
const notifyFlush = 5 * time.Second

// healthSlack is how much later than its longest sleep the scheduler loop
// may wake on a loaded machine before /healthz calls it stuck.
const healthSlack = 5 * time.Second

// listenNotifier adds the notifications and pings of the jobs of the
// current config to the fan-out. Its queues are flushed, within
// notifyFlush, when the env closes: after the runs have ended.
func (e *Env) listenNotifier(log *slog.Logger) {
	e.Notifier = notify.New(e.jobLookup(), log)
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

// serveMetrics serves /metrics and /healthz when metrics.listen or
// Options.MetricsAddr asks for it. A change of the address on reload
// takes effect at restart.
func (d *Daemon) serveMetrics(cfg *config.Config) error {
	addr := cfg.Metrics.Listen
	if d.o.MetricsAddr != "" {
		addr = d.o.MetricsAddr
	}
	if addr == "" {
		return nil
	}
	m := metrics.New(metrics.Sources{NextFires: d.sched.NextFires, HistoryFailed: d.env.History.WriteFailures})
	d.env.Listen(m.Handle)
	d.env.Notifier.SetCounter(m.Delivered)
	clk := d.o.Clock
	srv, err := metrics.Serve(addr, m.Handler(func() bool { return d.sched.Awake(clk.Now(), healthSlack) }))
	if err != nil {
		return fmt.Errorf("metrics: cannot listen on %s: %w", addr, err)
	}
	d.env.onClose("metrics", srv.Close)
	d.log.Info("serving metrics", "addr", srv.Addr())
	return nil
}
