package owner

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/config"
)

// Gate answers, fire by fire, whether this host fires a job's slot. It is
// safe for concurrent use; it starts no goroutine (a waiting fire waits
// on its own).
type Gate struct {
	host  string
	clk   clock.Clock
	stale time.Duration // a View older than this tells nothing
	every time.Duration // how often Update comes
	log   *slog.Logger

	mu      sync.Mutex
	blind   bool // a fire found no fresh View, and none came since (logged once)
	view    View // zero until the first Update
	waiting map[*waiter]bool
	// tails are, per job, the end of the last failover fire let through:
	// the job's later fires wait for it, so that the late slots run in
	// slot order, before the next one (the ledger's cursor refuses an
	// older slot after a newer one).
	tails map[string]chan struct{}
	left  atomic.Int64
}

// waiter is a fire of a slot that another host owned at its instant,
// waiting for a View that tells whether that host fired it.
type waiter struct {
	job       string
	digest    uint64
	at        time.Time // its fire instant, by this host's clock
	owner     Member    // the owner at the fire
	verdict   chan bool // true: fire it here
	after     chan struct{}
	done      chan struct{}
	ownerFire time.Time // the owner's fire instant, by this host's clock
}

// New returns a gate for host (this host's name in the Views) on clk. A
// View older than stale (the fleet's staleness: a host silent for longer
// is lost to its peers) tells nothing, and this host fires everything;
// every is how often Update comes.
func New(host string, clk clock.Clock, stale, every time.Duration, opts ...Option) *Gate {
	g := &Gate{host: host, clk: clk, stale: stale, every: every, log: slog.New(slog.DiscardHandler),
		waiting: map[*waiter]bool{}, tails: map[string]chan struct{}{}}
	for _, o := range opts {
		o(g)
	}
	return g
}

// Option configures a Gate.
type Option func(*Gate)

// WithLog logs the fires let through that the owner did not make: a
// failover, and the start and end of a stretch without a fresh View.
func WithLog(l *slog.Logger) Option { return func(g *Gate) { g.log = l } }

// Left is how many slots this host left to their owner.
func (g *Gate) Left() int64 { return g.left.Load() }

// Owner is the host that owns job now, as the newest View has it; false
// when this host cannot tell (no fresh View, or no live host runs it).
func (g *Gate) Owner(job *config.Job) (string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.fresh() {
		return "", false
	}
	m, ok := top(&g.view, job.Name, Digest(job), "")
	return m.Host, ok
}

// fresh says whether the newest View still tells who is live. g.mu held.
func (g *Gate) fresh() bool {
	return !g.view.Read.IsZero() && g.clk.Now().Sub(g.view.Read) <= g.stale
}

// Slot says whether this host fires job's slot, whose fire instant is
// now. The owner, and a host that cannot tell, fire at once; another
// host waits until a newer View tells whether the owner fired it, and
// fires it only if the owner did not and this host is the next in rank
// (at most stale plus two beats after now). done must be called when a
// fire let through has ended. ctx ending leaves the slot.
func (g *Gate) Slot(ctx context.Context, job *config.Job) (fire bool, done func()) {
	now := g.clk.Now()
	g.mu.Lock()
	var o Member
	owned := false
	if g.fresh() {
		o, owned = top(&g.view, job.Name, Digest(job), "")
	} else if !g.blind && !g.view.Read.IsZero() {
		g.blind = true
		g.log.Warn("fleet: no fresh view of the hosts; this host fires every slot until it reads one (the lock decides)",
			"view_age", g.clk.Now().Sub(g.view.Read).Round(time.Millisecond).String())
	}
	if !owned || o.Host == g.host {
		prev := g.tails[job.Name]
		g.mu.Unlock()
		waitFor(ctx, prev)
		return true, func() {}
	}
	w := &waiter{job: job.Name, digest: Digest(job), at: now, owner: o, ownerFire: now.Add(-o.Offset),
		verdict: make(chan bool, 1), done: make(chan struct{})}
	g.waiting[w] = true
	g.mu.Unlock()
	return g.await(ctx, w)
}

// await waits for w's verdict; a View that does not come in time (this
// host can no longer read the fleet) lets it fire, as a host that cannot
// tell does.
func (g *Gate) await(ctx context.Context, w *waiter) (bool, func()) {
	t := g.clk.NewTimer(Margin + g.stale + 2*g.every)
	defer t.Stop()
	var fire bool
	select {
	case fire = <-w.verdict:
	case <-ctx.Done():
		if g.withdraw(w, false) {
			return false, nil
		}
		fire = <-w.verdict
	case <-t.C():
		if g.withdraw(w, true) {
			g.log.Warn("fleet: no view of the hosts told whether the owner fired the slot; firing it here",
				"job", w.job, "owner", w.owner.Host)
			return g.through(ctx, w)
		}
		fire = <-w.verdict
	}
	if !fire {
		return false, nil
	}
	return g.through(ctx, w)
}

// withdraw takes w out of the waiting, letting it through when fire;
// false when an Update judged it first.
func (g *Gate) withdraw(w *waiter, fire bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.waiting[w] {
		return false
	}
	delete(g.waiting, w)
	if fire {
		g.chainLocked(w)
	} else {
		g.left.Add(1)
	}
	return true
}

// through waits for the job's earlier failover fire, then lets w's
// fire go; done ends w's turn.
func (g *Gate) through(ctx context.Context, w *waiter) (bool, func()) {
	waitFor(ctx, w.after)
	return true, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		close(w.done)
		if g.tails[w.job] == w.done {
			delete(g.tails, w.job)
		}
	}
}

// chainLocked puts w at the end of its job's failover fires. g.mu held.
func (g *Gate) chainLocked(w *waiter) {
	w.after = g.tails[w.job]
	g.tails[w.job] = w.done
}

// Update makes v the newest View and judges the waiting fires by it: the
// ones let through go in slot order.
func (g *Gate) Update(v View) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.view = v
	if g.blind {
		g.blind = false
		g.log.Info("fleet: a fresh view of the hosts again; slots go to their owners")
	}
	var fire []*waiter
	for w := range g.waiting {
		decided, f := judge(g.host, w, &v)
		if !decided {
			continue
		}
		delete(g.waiting, w)
		if !f {
			g.left.Add(1)
			w.verdict <- false
			continue
		}
		fire = append(fire, w)
	}
	slices.SortFunc(fire, func(a, b *waiter) int { return a.at.Compare(b.at) })
	for _, w := range fire {
		g.log.Warn("fleet: firing a slot its owner may not have fired", "job", w.job, "owner", w.owner.Host,
			"owner_now", ownerNow(&v, w.owner), "late", g.clk.Now().Sub(w.at).Round(time.Millisecond).String())
		g.chainLocked(w)
		w.verdict <- true
	}
}

// judge tells whether v decides w and whether this host (me) fires it.
// The owner fired it if the same start of its daemon beat after its fire
// instant (plus Margin); while that start is up and has not, v tells
// nothing yet. Otherwise (it is lost, stopped, or restarted: it was down
// at its fire) the best-ranked other live host running the job fires it,
// or this host when there is none.
func judge(me string, w *waiter, v *View) (decided, fire bool) {
	if o := v.find(w.owner.Host); o != nil && o.Incarnation == w.owner.Incarnation {
		if o.LastBeat.After(w.ownerFire.Add(Margin)) {
			return true, false
		}
		if o.Up {
			return false, false
		}
	}
	next, ok := top(v, w.job, w.digest, w.owner.Host)
	return true, !ok || next.Host == me
}

// ownerNow says what v shows of the owner o was at a fire: for the log.
func ownerNow(v *View, o Member) string {
	m := v.find(o.Host)
	switch {
	case m == nil:
		return "gone"
	case m.Incarnation != o.Incarnation:
		return "restarted"
	case !m.Up:
		return "lost"
	}
	return "up"
}

// waitFor waits for ch to close (nil: at once), or for ctx.
func waitFor(ctx context.Context, ch chan struct{}) {
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	}
}
