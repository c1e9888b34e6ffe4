// Package recovery records the runs that a dead supervisor left behind, so
// that every run has exactly one record. A supervisor that dies (SIGKILL,
// a crash) may leave a run without its start row (the row was still
// queued) or without its end row; the run's processes may even go on,
// holding the run's lock.
//
// The lock file's record, written before the run's exec and marked in
// flight until the supervisor's Release, names such a run: its job, run
// id, slot and supervisor. A Recoverer rebuilds the missing start row from
// it, and closes the run as interrupted (exit status unknown) as soon as
// the run's processes have let go of the lock: at once when they have,
// else when the last of them exits, which it waits for as an event
// (file.Locker.AwaitRelease) rather than polls.
//
// It looks at start-up (Sweep), whenever this supervisor takes or
// inspects a lock (the Locker it wraps reports every record it sees), and
// in a periodic Sweep for runs nothing else brought up (a lock that no
// fire here touches, a backend without AwaitRelease).
package recovery

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
	"cronvisor/internal/proc/cgroup"
	"cronvisor/internal/store/history"
	"cronvisor/runner/ending"
)

// Store is the history the Recoverer writes: *history.Store. Its ends
// go through Config.Path.
type Store interface {
	OpenRuns(ctx context.Context) ([]run.Record, error)
	Adopt(ctx context.Context, r run.Record) (bool, error)
	Record(ctx context.Context, runID string) (run.Record, bool, error)
	ending.Writer
}

// Awaiter is a lock backend whose release can be waited for
// (*file.Locker). With another backend a run still held is looked at
// again at the next Sweep.
type Awaiter interface {
	AwaitRelease(ctx context.Context, name, runID string) error
}

// Config is what a Recoverer needs.
type Config struct {
	Store  Store
	Path   ending.Path // the one way every end is written and told
	Locker lock.Locker // the backend itself; Recoverer.Locker wraps it
	Alive  Alive       // which other supervisors are alive
	// Self, Started and Mine judge this process's pid: a run of Self is
	// its own if it started at Started or later, or if Mine says so (a
	// run in flight here: a clock stepped back since the start), else a
	// predecessor's that had the same pid, as a restarted container's
	// daemon often has. Mine may be slow: it is asked only about runs
	// from before Started. Nil Mine: none.
	Self    int
	Started time.Time
	Mine    func(runID string) bool
	// LockOf maps a job of an open history row to its lock name.
	LockOf   func(job string) string
	StateDir string // where run logs are (statedir.Dir.RunLog)
	// Cgroup is the hierarchy runs' leaves are made in (nil: runs are
	// contained by process tree): a run recorded here whose leaf still
	// holds processes (escapees that let go of the lock) has them ended
	// through it, and its leaf removed.
	Cgroup *cgroup.Hierarchy
	// KeepAge is the history's retention (0: forever): an in-flight
	// record older than that is not recorded again, its row having been
	// pruned. Nil: forever.
	KeepAge func() time.Duration
	Now     func() time.Time // default time.Now
	Log     *slog.Logger
	// Resume runs the remaining attempts of a slot that a stopped or dead
	// supervisor left waiting for a retry, blocking until the slot ends or
	// ctx does (then it leaves the slot as it was, to the next
	// supervisor); its error says why it did not take the slot on, which
	// is then recorded as ended. Nil: such a slot ends (DiedInBackoff).
	Resume func(ctx context.Context, r Resumption) error
	// SlotsOf is the resource slots ("db/1") run runID holds, as the
	// slots' own records name it. Nil: none are looked up.
	SlotsOf func(ctx context.Context, runID string) []string
	// KillGrace is a job's kill_grace, for an adopted run ended without
	// its keeper (EndAdopted). Nil: 10s.
	KillGrace func(job string) time.Duration
}

// Recoverer recovers the runs of dead supervisors on this host. It owns
// one goroutine that handles the records fires report, and one per run
// whose lock it waits for; Close stops and waits for them all.
type Recoverer struct {
	cfg  Config
	host string
	seen chan sighting

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	watching map[string]bool     // run ids whose lock is awaited
	keeping  map[string]bool     // run ids whose live keeper is watched (see adoptKeepers)
	adopted  map[string]orphan   // runs watched either way: a dead supervisor's, still going
	slots    map[string][]string // adopted run ids -> the resource slots they hold (slots.go)
	asked    map[string]string   // run ids an operator or a replacing fire ended: the reason
	done     map[string]bool     // run ids found recorded, bounded by maxDone
	scanned  time.Time           // when the last successful Sweep began; zero: none yet
	live     map[string]bool     // locks whose record named a live supervisor's run then

	// silent holds the adopted runs ended without their keeper (Silent).
	silent map[string]silence
	// guarding: run ids guarded here, their keeper dead too (guard.go);
	// guardEnds: how a guard ended one, until it is recorded.
	guarding  map[string]bool
	guardEnds map[string]guardEnd
}

// sighting is a lock record a fire or an inspection came across.
type sighting struct {
	lock   string
	holder lock.Record
}

// seenQueue bounds the records waiting for the Recoverer's goroutine; one
// that finds the queue full is dropped for the periodic Sweep to find.
const seenQueue = 64

// maxDone bounds the memory of runs already handled; past it, it starts
// over (a forgotten run costs two no-op statements when seen again).
const maxDone = 4096

// New returns a Recoverer, its goroutine started.
func New(cfg Config) *Recoverer {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	host, _ := os.Hostname()
	r := &Recoverer{cfg: cfg, host: host, seen: make(chan sighting, seenQueue),
		watching: map[string]bool{}, adopted: map[string]orphan{}, slots: map[string][]string{}, keeping: map[string]bool{}, asked: map[string]string{}, done: map[string]bool{}}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.wg.Add(1)
	go r.loop()
	return r
}

// Close stops waiting for locks and waits for the goroutines to return.
func (r *Recoverer) Close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
}

func (r *Recoverer) loop() {
	defer r.wg.Done()
	for {
		select {
		case <-r.ctx.Done():
			return
		case s := <-r.seen:
			_, err := r.recoverRecord(r.ctx, s.lock, s.holder)
			r.logError("recording a dead supervisor's run", err, "lock", s.lock, "run_id", s.holder.RunID)
		}
	}
}

// watch waits, in a goroutine of its own, for o's processes to let go of
// its lock, then records o. Once per run; not after Close, nor with a
// backend that cannot be waited for.
func (r *Recoverer) watch(o orphan) {
	aw, ok := r.cfg.Locker.(Awaiter)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.watching[o.runID] {
		return
	}
	r.watching[o.runID] = true
	r.adopted[o.runID] = o
	r.wg.Go(func() { r.noteSlots(o.runID) })
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer r.unwatch(o.runID)
		if err := aw.AwaitRelease(r.ctx, o.lock, o.runID); err != nil {
			r.logError("waiting for a dead supervisor's run to let go of its lock", err, "lock", o.lock, "run_id", o.runID)
			return // the next Sweep looks again
		}
		_, err := r.finish(r.ctx, o)
		r.logError("recording a dead supervisor's run", err, "run_id", o.runID)
	}()
}

// logError logs err unless it is nil, the Recoverer is closing, or the
// store is unavailable (history degraded, which is reported once
// elsewhere: the run is looked at again by the next Sweep).
func (r *Recoverer) logError(msg string, err error, attrs ...any) {
	if err == nil || r.ctx.Err() != nil || errors.Is(err, history.ErrUnavailable) {
		return
	}
	r.cfg.Log.Error(msg, append(attrs, "err", err)...)
}

func (r *Recoverer) unwatch(runID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.watching, runID)
	if !r.keeping[runID] {
		r.unadoptLocked(runID)
	}
	delete(r.asked, runID)
}

// known reports whether the run is being waited for or known recorded.
func (r *Recoverer) known(runID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.watching[runID] || r.done[runID]
}

func (r *Recoverer) remember(runID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.done) >= maxDone {
		clear(r.done)
	}
	r.done[runID] = true
}
