package daemon

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/daemon/service"
	"cronvisor/internal/store/fleet"
)

// startFleet wires the fleet's shared history (history_backend:
// postgres): the local store's outbox on, and a shipper that copies it to
// the shared store for the daemon's life. Without a shared history the
// outbox is turned off, so the local store's writes pay nothing for it.
// It returns the shared store for the service's reads (nil without one).
//
// The shipper stops after the history writer (its last round then ships
// the writer's last records) and before the local store closes.
func (d *Daemon) startFleet(cfg *config.Config) *fleet.Store {
	e := d.env
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if cfg.HistoryBackend.Type != config.HistoryPostgres {
		if err := e.Store.SetShipping(ctx, false); err != nil {
			d.log.Debug("history: outbox not turned off", "err", err)
		}
		return nil
	}
	host, _ := os.Hostname()
	shared, err := fleet.Open(cfg.HistoryBackend.URL, host)
	if err != nil { // the config's check parses the url as Open does
		d.log.Error("history backend: not shipping", "err", err)
		return nil
	}
	if err := e.Store.SetShipping(ctx, true); err != nil {
		// An unopened store turns it on when it opens.
		d.log.Warn("history backend: the local outbox is not on yet", "err", err)
	}
	sh := fleet.NewShipper(e.Store, shared, fleet.WithShipperLog(d.log))
	e.Listen(func(ev run.Event) {
		switch ev.(type) {
		case run.End, run.Skip:
			sh.Nudge() // a record was just committed
		}
	})
	e.closeBeforeStore(closer{"history backend", shared.Close}, closer{"shipper", sh.Close})
	d.log.Info("history backend: shipping this host's records to the shared history", "host", host)
	return shared
}

// closeBeforeStore adds parts that Close stops just before the history
// store, after everything opened since (the history writer above all);
// the last given stops first.
func (e *Env) closeBeforeStore(parts ...closer) {
	i := slices.IndexFunc(e.closers, func(c closer) bool { return c.part == "history" })
	e.closers = slices.Insert(e.closers, i+1, parts...)
	for _, p := range parts {
		e.log.Debug("started", "part", p.part)
	}
}

// keepHistoryBackend keeps the running history backend through a reload
// that changes it: the shipper and the shared reads are wired at start.
func keepHistoryBackend(log *slog.Logger, cfg, old *config.Config) {
	if cfg.HistoryBackend.Type != old.HistoryBackend.Type || cfg.HistoryBackend.URL != old.HistoryBackend.URL {
		log.Warn("history_backend changes take effect at restart, not on reload")
	}
	cfg.HistoryBackend = old.HistoryBackend
}

// fleetHosts reads the fleet's hosts for GET /v1/hosts: the fleet
// store's words turned into the wire's, here where both are known.
func fleetHosts(shared *fleet.Store) service.HostsFunc {
	return func(ctx context.Context) ([]ctl.HostStatus, error) {
		hosts, err := shared.Hosts(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]ctl.HostStatus, len(hosts))
		for i, h := range hosts {
			out[i] = hostStatus(h)
		}
		return out, nil
	}
}

// hostStatus is one host on the wire.
func hostStatus(h fleet.Host) ctl.HostStatus {
	s := ctl.HostStatus{Host: h.Name, State: string(h.State), Version: h.Version, PID: h.PID,
		StartedAt: h.Started, LastBeat: h.LastBeat, SilentMS: h.Silent.Milliseconds(),
		ClockOffsetMS: h.Offset.Milliseconds(), Running: make([]ctl.HostRun, len(h.Running))}
	for i, r := range h.Running {
		s.Running[i] = ctl.HostRun{Job: r.Job, RunID: r.RunID, StartedAt: r.Started}
	}
	return s
}
