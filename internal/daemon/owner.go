package daemon

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"time"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/base/ratelog"
	"cronvisor/internal/config"
	"cronvisor/internal/daemon/owner"
	"cronvisor/internal/store/fleet"
	"cronvisor/runner"
)

// ownership makes the fleet's slot ownership, with history_backend
// postgres: the gate every scheduled fire asks (see package owner),
// which the members loop (startOwnership) keeps up to date. Until its
// first read, and whenever its reads fail for longer than the fleet's
// staleness, the gate lets every fire through: the lock decides, as
// without ownership.
func (e *Env) ownership(cfg *config.Config, clk clock.Clock) []runner.Option {
	if cfg.HistoryBackend.Type != config.HistoryPostgres {
		return nil
	}
	host, _ := os.Hostname()
	e.Owner = owner.New(host, clk, fleet.UpWithin, fleet.BeatEvery, owner.WithLog(e.log))
	return []runner.Option{runner.WithOwnership(e.Owner)}
}

// leftToOwner is the metric's source of the slots this host left to
// their owners, with history_backend postgres; nil otherwise. It is read
// at scrape time, when the Env exists.
func leftToOwner(cfg *config.Config, d *Daemon) func() int64 {
	if cfg.HistoryBackend.Type != config.HistoryPostgres {
		return nil
	}
	return func() int64 {
		if d.env == nil || d.env.Owner == nil {
			return 0
		}
		return d.env.Owner.Left()
	}
}

// memberReader is what the members loop needs of the shared history
// (*fleet.Members); tests give a fake.
type memberReader interface {
	Read(ctx context.Context, jobs []uint64) ([]fleet.Member, error)
}

// members is the loop that reads the fleet's hosts for the gate.
type members struct {
	r        memberReader
	gate     *owner.Gate
	host     string
	clk      clock.Clock
	current  func() *config.Config
	failures *ratelog.Limiter

	cfg     *config.Config // the one digests were made of
	digests map[uint64]bool
	list    []uint64
}

// startOwnership starts the members loop: every fleet.BeatEvery it
// publishes this host's job digests and reads every host's row into a
// View for the gate (one statement: no query per fire). It is separate
// from the heartbeat's loop, so that a slow read never delays a beat.
func (e *Env) startOwnership(shared *fleet.Store, clk clock.Clock, current func() *config.Config) {
	if e.Owner == nil || shared == nil {
		return
	}
	stop := startMembers(&members{r: fleet.NewMembers(shared), gate: e.Owner, host: shared.Host(), clk: clk,
		current: current, failures: ratelog.New(e.log, ratelog.Every)})
	e.onClose("slot ownership", func() error { stop(); return nil })
}

// startMembers runs m's loop in a goroutine; stop ends it and waits.
func startMembers(m *members) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := m.clk.NewTimer(0)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C():
			}
			next := fleet.BeatEvery
			if !m.round(ctx) {
				next = republishSoon
			}
			t.Reset(next)
		}
	}()
	return func() { cancel(); <-done; m.failures.Close() }
}

// republishSoon is how soon the members loop reads again when this
// host's row did not exist yet at its read (its first beat had not
// landed), so its digests could not be published: until they are, peers
// do not count it as running its jobs and may fire what it owns (the
// lock decides), so the window is kept to a beat rather than two.
const republishSoon = 100 * time.Millisecond

// round is one read of the hosts, handed to the gate as a View; false
// when this host's digests are not published yet (no row of its own).
func (m *members) round(ctx context.Context) bool {
	if cfg := m.current(); cfg != m.cfg {
		m.cfg, m.digests = cfg, owner.Digests(cfg.Jobs)
		m.list = make([]uint64, 0, len(m.digests))
		for d := range m.digests {
			m.list = append(m.list, d)
		}
	}
	rctx, cancel := context.WithTimeout(ctx, peerCallTimeout)
	t0 := m.clk.Now()
	ms, err := m.r.Read(rctx, m.list)
	t1 := m.clk.Now()
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			m.failures.Log("members", slog.LevelWarn, "fleet: cannot read the hosts; this host fires every slot until it can (the lock decides)", "err", err.Error())
		}
		return true
	}
	m.gate.Update(view(ms, m.host, m.digests, t0.Add(t1.Sub(t0)/2)))
	return slices.ContainsFunc(ms, func(mb fleet.Member) bool { return mb.Host == m.host })
}

// view turns the hosts' rows, read at mid by this host's clock, into the
// gate's View: beats and offsets by this host's clock, and this host's
// own jobs as it runs them now. This host is always up in its own view,
// even before its first beat reached the table: a host that left itself
// out could leave a slot to a peer that, seeing it, leaves it back; one
// that counts itself in at worst races a peer for a slot, and the lock
// decides.
func view(ms []fleet.Member, me string, mine map[uint64]bool, mid time.Time) owner.View {
	var myOffset time.Duration
	self := false
	for _, m := range ms {
		if m.Host == me {
			myOffset, self = m.Offset, true
		}
	}
	if !self {
		ms = append(ms, fleet.Member{Host: me})
	}
	v := owner.View{Read: mid, Members: make([]owner.Member, 0, len(ms))}
	for _, m := range ms {
		jobs := mine
		if m.Host != me {
			jobs = make(map[uint64]bool, len(m.Jobs))
			for _, d := range m.Jobs {
				jobs[d] = true
			}
		}
		v.Members = append(v.Members, owner.Member{Host: m.Host, Jobs: jobs,
			Incarnation: strconv.Itoa(m.PID) + "@" + m.Started.UTC().Format(time.RFC3339Nano),
			Up:          m.Host == me || (!m.Stopped && m.Silent <= fleet.UpWithin),
			LastBeat:    mid.Add(-m.Silent), Offset: m.Offset - myOffset})
	}
	return v
}
