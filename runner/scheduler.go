package runner

import (
	"container/heap"
	"context"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/lock"
)

// Defaults for the loop; see the Scheduler doc for what they mean.
const (
	// LateTolerance is how late a fire may start and still run. Later than
	// this (a suspend, a clock stepped forward) the fire is recorded as
	// missed instead, unless the job's catch_up window is longer.
	LateTolerance = time.Minute
	// maxSleep caps each wait so that a wall clock stepped forward is
	// noticed within this long: Go timers run on the monotonic clock and do
	// not see steps. It is a bound, not a poll: idle cost is one wake-up per
	// maxSleep for the whole process, not per job.
	maxSleep = 30 * time.Second
	// missedScan bounds how many missed slots one wake-up walks through.
	missedScan = 10000
	// wakeLead is how early the loop's timer is set before a fire on the
	// real clock. Go's timers wake late, because the runtime's poller
	// sleeps in whole milliseconds; so the loop wakes this much early and
	// sleeps the rest on a timer the kernel ends far more precisely
	// (timerSettle; BENCHMARKS.md, "Start lateness", has the figures).
	wakeLead = 2 * time.Millisecond
)

// LastSlotsFunc returns, for each of jobs, the latest slot it fired for
// (ran or skipped) before this process started; used for catch_up after
// downtime. Jobs without a slot are absent from the map.
type LastSlotsFunc func(ctx context.Context, jobs []string) (map[string]time.Time, error)

// Scheduler fires every enabled job at its slots. One goroutine (Run) owns
// the heap of next fires and sleeps on one timer for the earliest; runs go
// to the Supervisor in their own goroutines.
//
// Clock jumps: after every wake-up the loop re-reads Now(). A clock stepped
// back fires nothing until the nominal slot comes round again (no slot is
// fired twice: a job's next slot is always after its last one). A clock
// stepped forward (or a suspend) makes slots due at once: the newest due
// slot runs if it is at most max(LateTolerance, catch_up) old, and the ones
// it passed over are recorded as one skip "missed".
type Scheduler struct {
	clock     clock.Clock
	firer     Firer
	emit      func(run.Event)
	lastSlots LastSlotsFunc
	// ledger, when the lock backend shares its slot claims between hosts,
	// gives start-up the fleet's last slots and decides which host records
	// the slots missed while all were down (see WithLedger); nil after
	// start-up, or when it could not be read.
	ledger lock.SlotLedger
	// peers, with a shared history, tells start-up since when a peer up
	// now has been up (see WithPeers); asked once, nil after start-up.
	peers      PeersUpFunc
	peersAsked bool
	peersSince time.Time                                         // zero: no peer up, or not known
	upSince    time.Time                                         // WithUpSince
	delay      func(j *config.Job, slot time.Time) time.Duration // a fire's jitter
	// settle sleeps the last stretch before a fire precisely, when the
	// timer woke lead early; nil (fake clocks) waits for the timer alone.
	settle func(d time.Duration)
	lead   time.Duration
	// timerSettle: Run settles on a timerfd (see timerSettle), settle
	// being the fallback.
	timerSettle bool
	procs       parallelism

	maxSleep time.Duration
	reload   chan []config.Job
	runs     sync.WaitGroup
	workers  *workers // the goroutines fires run on

	// woke is when the loop last woke (Unix nanoseconds): /healthz tells
	// a live loop from a stuck one by it.
	woke atomic.Int64

	began     chan struct{} // closed once Run has built its heap
	beganOnce sync.Once

	mu     sync.Mutex
	next   map[string]time.Time // job -> next due fire, for status
	stalls map[string]run.Stall // job -> why it has no next fire
}

// Firer runs one fire, and records the fires the scheduler does not run
// (missed, disabled, dropped); *Supervisor is the real one.
type Firer interface {
	Fire(ctx context.Context, job config.Job, slot time.Time, manual bool) run.End
	Skip(run.Skip)
}

// NewScheduler returns a scheduler that fires through f on clock c and
// records what it does not fire (missed, disabled) through f.Skip; emit
// gets the scheduler's own events (a stalled schedule).
func NewScheduler(f Firer, c clock.Clock, emit func(run.Event), opts ...SchedulerOption) *Scheduler {
	s := &Scheduler{
		clock:    c,
		firer:    f,
		emit:     emit,
		reload:   make(chan []config.Job),
		workers:  newWorkers(),
		maxSleep: maxSleep,
		next:     map[string]time.Time{},
		stalls:   map[string]run.Stall{},
		delay:    (*config.Job).Delay,
		began:    make(chan struct{}),
	}
	if _, real := c.(clock.Real); real {
		s.settle, s.lead, s.timerSettle = sleepPrecise, wakeLead, true
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// sleepPrecise sleeps d (at most wakeLead) in nanosleep(2) on this
// goroutine's thread, resuming after the signals the Go runtime sends.
func sleepPrecise(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}

// Run schedules jobs until ctx is done. It returns without waiting for
// runs in flight; Wait does that. jobs, like Reload's, is read while the
// scheduler runs and must not be changed.
func (s *Scheduler) Run(ctx context.Context, jobs []config.Job) {
	defer s.workers.stop() // a fire in flight keeps its worker to its end
	h, byName := s.build(ctx, jobs)
	s.beganOnce.Do(func() { close(s.began) })
	timer := s.clock.NewTimer(time.Hour)
	defer timer.Stop()
	s.procs.adjust()
	defer s.procs.restore()
	settle := s.settle
	if s.timerSettle {
		if t, err := openTimerSettle(); err == nil {
			defer t.close()
			settle = t.sleep
		}
	}
	for {
		now := s.clock.Now()
		s.woke.Store(now.UnixNano())
		if d := s.untilNext(h, now); settle != nil && d > 0 && d <= s.lead {
			settle(d)
			now = s.clock.Now()
		}
		for h.Len() > 0 && !(*h)[0].due.After(now) {
			e := (*h)[0]
			s.fire(ctx, e, now)
			heap.Fix(h, 0)
			s.publish(e)
			s.procs.adjust()
		}
		s.procs.adjust()
		wait := min(s.maxSleep, s.untilNext(h, now))
		if s.settle != nil {
			wait = max(wait-s.lead, 0) // wake early; settle sleeps the rest
		}
		timer.Stop()
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			s.recordOverdue(h, s.clock.Now())
			return
		case <-timer.C():
		case jobs := <-s.reload:
			s.apply(ctx, h, byName, jobs)
		}
	}
}

// build makes the heap of next fires, and its index by job name.
func (s *Scheduler) build(ctx context.Context, jobs []config.Job) (*entryHeap, map[string]*entry) {
	// Sized for every job at once: grown one job at a time, the maps
	// rehash and the heap copies its way to a million jobs.
	entries := make(entryHeap, 0, len(jobs))
	h := &entries
	byName := make(map[string]*entry, len(jobs))
	s.mu.Lock()
	s.next = make(map[string]time.Time, len(jobs))
	s.mu.Unlock()
	now := s.clock.Now()
	last := s.startSlots(ctx, jobs)
	for i := range jobs {
		s.add(ctx, h, byName, &jobs[i], now, last)
	}
	// Asked once: whatever the func holds (history read at start-up) is
	// garbage from here on.
	s.lastSlots, s.ledger, s.peers = nil, nil, nil
	return h, byName
}

// Began is closed once Run has read the jobs' last slots and built its
// schedule: what start-up allocates for the loop is allocated by then.
func (s *Scheduler) Began() <-chan struct{} { return s.began }

// Awake tells whether the loop has woken within its longest sleep (plus
// slack for a loaded machine) before now: false once it is stuck, or
// before Run started.
func (s *Scheduler) Awake(now time.Time, slack time.Duration) bool {
	w := s.woke.Load()
	return w != 0 && now.Sub(time.Unix(0, w)) <= s.maxSleep+slack
}

// WaitAll blocks until every run started by the scheduler has ended.
func (s *Scheduler) WaitAll() { s.runs.Wait() }

// untilNext is how long until the earliest due fire, or maxSleep if none.
func (s *Scheduler) untilNext(h *entryHeap, now time.Time) time.Duration {
	if h.Len() == 0 {
		return s.maxSleep
	}
	return (*h)[0].due.Sub(now)
}

// NextFires returns each scheduled job's next fire (with jitter).
func (s *Scheduler) NextFires() map[string]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.next)
}

// publish updates one job's next fire for NextFires: per change, not per
// wake-up, so that a wake-up costs the same with 10 or 10,000 jobs.
func (s *Scheduler) publish(e *entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.job.Enabled && !e.slot.IsZero() {
		s.next[e.job.Name] = e.due
	} else {
		delete(s.next, e.job.Name)
	}
}

// unpublish removes a job that left the schedule from NextFires.
func (s *Scheduler) unpublish(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.next, name)
	delete(s.stalls, name)
}

// add schedules a job. last holds the jobs' slots before this process
// started (start-up only; nil on reload): a job found there gets catchUp.
func (s *Scheduler) add(ctx context.Context, h *entryHeap, byName map[string]*entry, j *config.Job, now time.Time, last map[string]time.Time) {
	if j.Sched == nil {
		return
	}
	e := &entry{job: j}
	if t, ok := last[j.Name]; ok {
		s.catchUp(ctx, *j, now, t)
	}
	s.advance(e, now, now)
	byName[j.Name] = e
	heap.Push(h, e)
	s.publish(e)
}

// fire handles a due entry as decide says, and advances it to its next
// slot.
func (s *Scheduler) fire(ctx context.Context, e *entry, now time.Time) {
	d := decide(*e, now)
	j := *e.job
	switch d.act {
	case missAll:
		s.recordMissed(j, d.first, d.missed, "missed: supervisor woke "+d.late.Round(time.Second).String()+" late (suspend or clock step)")
	case runSlot, skipDisabled:
		if d.missed > 0 {
			s.recordMissed(j, d.first, d.missed, "missed: supervisor woke late (suspend or clock step); only the newest fire runs")
		}
		if d.act == skipDisabled {
			s.firer.Skip(run.Skip{Job: j.Name, RunID: run.NewID(now), Slot: d.slot, Time: now, Reason: "disabled", Class: run.ClassDisabled})
		} else {
			s.dispatch(ctx, j, d.slot)
		}
	}
	s.advance(e, d.from, now)
}

func (s *Scheduler) dispatch(ctx context.Context, j config.Job, slot time.Time) {
	s.procs.inFlight.Add(1)
	s.runs.Add(1)
	s.workers.run(func() {
		defer s.runs.Done()
		defer s.procs.inFlight.Add(-1)
		s.firer.Fire(ctx, j, slot, false)
	})
}

func (s *Scheduler) recordMissed(j config.Job, first time.Time, n int, reason string) {
	s.firer.Skip(s.missedSkip(j, first, n, reason))
}

// missedSkip is the one skip that records n missed slots from first.
func (s *Scheduler) missedSkip(j config.Job, first time.Time, n int, reason string) run.Skip {
	if n > 1 {
		reason += " (" + strconv.Itoa(n) + " fires from " + first.Format(time.RFC3339) + ")"
	}
	now := s.clock.Now()
	return run.Skip{Job: j.Name, RunID: run.NewID(now), Slot: first, Time: now, Reason: reason, Class: run.ClassMissed}
}

// missedSlots walks the slots in (after, now]: the first, the newest and
// how many (bounded by missedScan; beyond it the count is a lower bound).
func missedSlots(j config.Job, after, now time.Time) (first, newest time.Time, n int) {
	for t := j.Sched.Next(after); !t.IsZero() && !t.After(now); t = j.Sched.Next(t) {
		if n == 0 {
			first = t
		}
		newest = t
		n++
		if n >= missedScan {
			break
		}
	}
	return first, newest, n
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
