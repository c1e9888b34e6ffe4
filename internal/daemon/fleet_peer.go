package daemon

import (
	"context"
	"log/slog"
	"os"
	"runtime/debug"
	"time"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/base/ratelog"
	"cronvisor/internal/store/fleet"
	"cronvisor/runner/ending"
)

// peerStore is what the fleet peer needs of the shared history
// (sharedPeer over a *fleet.Store); tests give a fake.
type peerStore interface {
	Beat(ctx context.Context, version string, pid int, started time.Time) (time.Duration, time.Time, error)
	Stopped(ctx context.Context) error
	// Watched closes lost hosts' runs counting their silence from no
	// earlier than since (fleet.Store.Watched).
	Watched(since time.Time) ending.LostCloser
}

// sharedPeer is the fleet's store as a peerStore.
type sharedPeer struct{ *fleet.Store }

func (s sharedPeer) Watched(since time.Time) ending.LostCloser { return s.Store.Watched(since) }

// maxClockOffset is how far this host's clock may be from the shared
// history's server before the peer warns: slots are wall-clock instants,
// and the records of hosts whose clocks disagree by more read out of
// order in the shared history.
const maxClockOffset = time.Second

// peerCallTimeout bounds each of the peer's statements, so that a server
// that hangs delays the next beat rather than stopping the loop.
const peerCallTimeout = 2 * time.Second

// fleetPeer is this host's part in the fleet's dead-man switch: it
// beats, and closes the runs of hosts that stopped beating.
type fleetPeer struct {
	store    peerStore
	path     ending.Path
	log      *slog.Logger
	clk      clock.Clock
	version  string
	started  time.Time
	failures *ratelog.Limiter
	skewSaid time.Time // when the clock warning was last logged
	// steady is when, by the server's clock, this peer's unbroken run of
	// beats began; last is its latest beat's time, and broken says a beat
	// failed since.
	steady, last time.Time
	broken       bool
}

// startFleetPeer starts the peer's one goroutine: every fleet.BeatEvery
// a heartbeat, then the closing of lost hosts' runs through path, which
// tells each run it closed as a run.HostLost. stop ends the goroutine, waits for it and
// marks this host stopped (a clean shutdown, not a lost host).
func startFleetPeer(store peerStore, path ending.Path, log *slog.Logger, clk clock.Clock, version string) (stop func()) {
	p := &fleetPeer{store: store, path: path, log: log, clk: clk, version: version, started: clk.Now(),
		failures: ratelog.New(log, ratelog.Every)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.loop(ctx) }()
	log.Info("fleet: heartbeat started", "every", fleet.BeatEvery.String(), "lost_after", fleet.UpWithin.String())
	return func() {
		cancel()
		<-done
		sctx, scancel := context.WithTimeout(context.Background(), peerCallTimeout)
		defer scancel()
		if err := store.Stopped(sctx); err != nil {
			log.Warn("fleet: could not mark this host stopped; peers will call it lost", "err", err)
		}
		p.failures.Close()
	}
}

func (p *fleetPeer) loop(ctx context.Context) {
	t := p.clk.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		p.round(ctx)
		t.Reset(fleet.BeatEvery)
	}
}

// round is one beat and, when it went through, one pass of closing,
// which judges a host lost only by the silence this peer watched while
// beating without a gap itself (see fleet.Watch).
func (p *fleetPeer) round(ctx context.Context) {
	bctx, cancel := context.WithTimeout(ctx, peerCallTimeout)
	offset, at, err := p.store.Beat(bctx, p.version, os.Getpid(), p.started)
	cancel()
	if err != nil {
		p.broken = true
		if ctx.Err() == nil {
			p.failures.Log("beat", slog.LevelWarn, "fleet: heartbeat failed; peers will call this host lost", "err", err.Error())
		}
		return
	}
	p.noteBeat(at)
	p.checkClock(offset)
	cctx, cancel := context.WithTimeout(ctx, peerCallTimeout)
	_, err = p.path.CloseLost(cctx, p.store.Watched(p.steady), p.clk.Now())
	cancel()
	if err != nil && ctx.Err() == nil {
		p.failures.Log("close", slog.LevelWarn, "fleet: closing lost hosts' runs failed", "err", err.Error())
	}
}

// noteBeat starts a new run of beats at at after a gap in this peer's
// own beating: a failed beat, or two beats further apart by the server's
// clock than fleet.UpWithin (a server restart, a frozen process), across
// which every other host looked silent too.
func (p *fleetPeer) noteBeat(at time.Time) {
	if p.broken || p.last.IsZero() || at.Sub(p.last) > fleet.UpWithin {
		if !p.last.IsZero() {
			p.log.Info("fleet: heartbeat resumed after a gap; no host is judged lost until it has been silent for the staleness period since",
				"gap", at.Sub(p.last).Round(time.Millisecond).String(), "staleness", fleet.UpWithin.String())
		}
		p.steady = at
	}
	p.last, p.broken = at, false
}

// checkClock warns, at the first beat and then at most once a minute,
// while this host's clock is off the server's by more than
// maxClockOffset.
func (p *fleetPeer) checkClock(offset time.Duration) {
	if offset.Abs() <= maxClockOffset {
		return
	}
	now := p.clk.Now()
	if !p.skewSaid.IsZero() && now.Sub(p.skewSaid) < time.Minute {
		return
	}
	p.skewSaid = now
	p.log.Warn("fleet: this host's clock is off the history server's; fix its time sync (NTP)",
		"offset", offset.Round(time.Millisecond).String(), "max", maxClockOffset.String())
}

// startFleetPeer starts this host's heartbeat and its part in closing
// lost hosts' runs, on the fleet's shared store; Close stops it before the
// notifier, which gets its host_lost events, and before the store.
func (e *Env) startFleetPeer(shared *fleet.Store, clk clock.Clock) {
	stop := startFleetPeer(sharedPeer{shared}, ending.New(e.Emit), e.log, clk, buildVersion())
	e.onClose("fleet peer", func() error { stop(); return nil })
}

// buildVersion is this binary's module version, as cronvisor_build_info
// gives it.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
