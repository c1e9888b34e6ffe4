// Package service is the supervisor as the control socket and the console
// see it: job statuses built from the runner's events, lock states, history
// queries, and the operator's actions (run now, pause, resume, kill,
// reload). It implements ctl.Backend for the daemon and, in-process, for the
// embedded console.
//
// Construction follows the tree's one convention: a constructor takes its
// required dependencies as positional parameters, few of them, and the
// optional ones as WithX options; nothing is wired by a setter once the
// value is shared (SetConfig is a reload, a change of state, not wiring).
package service

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/semaphore"
	"cronvisor/internal/store/history"
	"cronvisor/runner"
)

// subscriberBuffer is how many events a slow subscriber may lag behind
// before events are dropped for it (never blocking the runner); it is
// told with a resync event (see broadcast).
const subscriberBuffer = 4096

// Service implements ctl.Backend.
type Service struct {
	sup       *runner.Supervisor
	sched     *runner.Scheduler
	locker    lock.Locker
	sems      semaphore.Semaphores // the resources; nil: none
	store     *history.Store       // nil when history is unavailable
	shared    SharedHistory        // the fleet's history; nil without one
	hosts     HostsFunc            // the fleet's hosts; nil without a shared history
	self      string               // this host's name, with hosts
	reload    func(ctx context.Context) error
	health    func() string // the history path's state for JobStatus.History; nil: none
	alerts    func(job string) (notification, failedPing string)
	adopted   func(runID string) (supervisorPID int, ok bool)
	durations LearnedDurations // JobStatus.Durations; nil: none
	silent    SilentFunc       // adopted runs a kill ended without their keeper; nil: none
	cfg       atomic.Pointer[config.Config]
	index     atomic.Pointer[jobIndex] // cfg's jobs by name, see named.go
	// attempts is each retrying job's attempts per slot (retries + 1),
	// for the wire's max_attempts: a map, as events come for any of
	// thousands of jobs.
	attempts atomic.Pointer[map[string]int]
	started  time.Time

	runs sync.WaitGroup // run-now and trigger fires
	// firing is the fires' context, cancelled by Drain: a triggered fire
	// still queued for its lock then gives up (its run, once started,
	// ends by the shutdown's rules, not by this).
	firing     context.Context
	stopFiring context.CancelFunc

	mu   sync.Mutex
	jobs map[string]*jobState
	// seeded is each job's newest run as the history told at start-up,
	// read (never written) for the jobs no event has touched since: a
	// summary of each of thousands of idle jobs rather than a jobState.
	seeded  StoredRuns
	subs    map[chan ctl.WireEvent]struct{}
	pauses  map[string]ctl.PauseInfo      // who paused each paused job; saved in the state dir
	waiting map[string]chan ctl.RunResult // run-now fires waiting for their first event
	daemon  daemonState
	kills   killBook // the runs kills signalled (kill.go)
}

// New returns a service over the running supervisor sup, whose jobs take
// their locks from locker, for cfg; opts give the optional parts (the
// scheduler, the history store, the seed of the jobs' states, reload,
// alerts ...). The pauses saved in cfg's state dir are applied to sup; an
// unreadable file is returned as an error beside a working service that
// starts without them.
func New(sup *runner.Supervisor, locker lock.Locker, cfg *config.Config, opts ...Option) (*Service, error) {
	s := &Service{sup: sup, locker: locker, reload: noReload,
		started: time.Now(), jobs: map[string]*jobState{}, subs: map[chan ctl.WireEvent]struct{}{},
		pauses: map[string]ctl.PauseInfo{}, waiting: map[string]chan ctl.RunResult{}}
	for _, o := range opts {
		o(s)
	}
	s.firing, s.stopFiring = context.WithCancel(context.Background())
	s.SetConfig(cfg)
	return s, s.restorePauses()
}

// SetConfig tells the service about a reloaded jobs.yaml.
func (s *Service) SetConfig(cfg *config.Config) {
	attempts := map[string]int{}
	for _, j := range cfg.Jobs {
		if j.Retries > 0 {
			attempts[j.Name] = j.Retries + 1
		}
	}
	s.attempts.Store(&attempts)
	s.index.Store(newJobIndex(cfg))
	s.cfg.Store(cfg)
}

// Handle is the runner.Fanout listener: it updates job states and hands
// the event to every subscriber without ever blocking.
func (s *Service) Handle(ev run.Event) {
	w, ok := ctl.EventOf(ev)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answerRunNow(w)
	if w.Type == ctl.EventConfigReloaded {
		s.daemon.reloaded(w)
	}
	if w.Job != "" {
		s.fold(&w)
	}
	s.broadcast(w)
}

// fold applies w to its job's state, with ctl.Apply as the console does,
// after giving it the job's max_attempts; s.mu held.
func (s *Service) fold(w *ctl.WireEvent) {
	st := s.state(w.Job)
	if w.Type == ctl.EventRunStarted || w.Type == ctl.EventRunFinished {
		w.MaxAttempts = (*s.attempts.Load())[w.Job]
	}
	ctl.Apply(&st.status, *w)
	switch w.Type {
	case ctl.EventRunStarted:
		if st.inFlight == nil {
			st.inFlight = map[string]flight{}
		}
		st.inFlight[w.RunID] = flight{start: *w}
	case ctl.EventRunSlow:
		if f, ok := st.inFlight[w.RunID]; ok {
			f.slow, f.slowReason = true, w.Reason
			st.inFlight[w.RunID] = f
		}
	case ctl.EventRunBeat:
		if f, ok := st.inFlight[w.RunID]; ok {
			beat := *w
			f.beat = &beat
			st.inFlight[w.RunID] = f
		}
	case ctl.EventRunFinished, ctl.EventHostLost:
		delete(st.inFlight, w.RunID)
		st.resume()
	}
}

// broadcast hands w to every subscriber without blocking; s.mu held. A
// subscriber that lags gets resync in its buffer's last place instead of
// w, and nothing more until it has read some: the events it misses after
// it happened before it reads resync, so the state it then reads again
// has them. Clients keep the table from events alone, so a drop must be
// said.
func (s *Service) broadcast(w ctl.WireEvent) {
	for ch := range s.subs {
		switch n := len(ch); {
		case n == cap(ch):
			// full, and resync is its last event
		case n == cap(ch)-1:
			ch <- ctl.WireEvent{Type: ctl.EventResync, Time: w.Time}
		default:
			ch <- w
		}
	}
}

// Subscribe implements ctl.Backend.
func (s *Service) Subscribe(ctx context.Context) (<-chan ctl.WireEvent, func()) {
	ch := make(chan ctl.WireEvent, subscriberBuffer)
	s.mu.Lock()
	s.subs[ch] = struct{}{}
	s.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			// Handle sends only under s.mu to channels still in subs, so
			// after the delete nothing can send and closing is safe.
			s.mu.Lock()
			delete(s.subs, ch)
			close(ch)
			s.mu.Unlock()
		})
	}
}

// Events is Subscribe in the ctl.Client's shape, for the embedded console:
// the channel closes when ctx ends.
func (s *Service) Events(ctx context.Context) (<-chan ctl.WireEvent, error) {
	ch, cancel := s.Subscribe(ctx)
	// No goroutine waits on ctx: cancel runs when it ends, and the
	// channel's close tells the reader that it has.
	context.AfterFunc(ctx, cancel)
	return ch, nil
}

// Jobs implements ctl.Backend.
func (s *Service) Jobs(ctx context.Context) ([]ctl.JobStatus, error) {
	return s.statuses(ctx, s.cfg.Load().Jobs), nil
}

func (s *Service) statuses(ctx context.Context, jobs []config.Job) []ctl.JobStatus {
	return s.appendStatuses(ctx, nil, jobs, nil)
}

// appendStatuses is statuses appended to dst, with the lock holders
// given (nil: read).
func (s *Service) appendStatuses(ctx context.Context, dst []ctl.JobStatus, jobs []config.Job, held map[string]lock.Record) []ctl.JobStatus {
	v := daemonView{s}
	b := Statuses{Locks: s.locker, History: v, Pauses: v, Live: v, Health: s.health, Alerts: s.alerts, Adopted: s.adopted,
		Guard: &s.mu, Held: held, Durations: s.durations}
	if s.shared != nil {
		b.History, b.Health = s.withShared(ctx, v, jobs)
	}
	return b.Append(ctx, dst, jobs)
}

// withShared is the status builder's history and health with the fleet's
// shared history: the fleet's last outcomes, or this host's and a note
// while it does not answer.
func (s *Service) withShared(ctx context.Context, v daemonView, jobs []config.Job) (RecentRuns, func() string) {
	names := make([]string, len(jobs))
	for i, j := range jobs {
		names[i] = j.Name
	}
	sums, ok := s.sharedRecent(ctx, names)
	if ok {
		return fleetRecent{local: v, shared: sums}, s.health
	}
	return v, func() string {
		if s.health != nil {
			if h := s.health(); h != "" {
				return h
			}
		}
		return SharedDown
	}
}

// daemonView is what the service knows of its jobs, in the terms of the
// status builder. Recent, Paused, Running and Queued are read with s.mu
// held (the builder's Guard).
type daemonView struct{ s *Service }

// folded is the job's status as its events made it, its seed for a job
// without any: a read allocates no state for thousands of idle jobs.
func (v daemonView) folded(job string) ctl.JobStatus {
	if st := v.s.jobs[job]; st != nil {
		return st.status
	}
	return v.s.seededStatus(job)
}

func (v daemonView) Recent(job string) Recent {
	st := v.folded(job)
	return Recent{Outcome: st.LastOutcome, Started: st.LastStartedAt, Ended: st.LastEndedAt,
		Counts: ctl.Counts{Since: v.s.started, Runs: st.Counts.Runs, Skips: st.Counts.Skips, Failures: st.Counts.Failures}}
}

func (v daemonView) Paused(job string) (*ctl.PauseInfo, bool) {
	return v.s.pausedBy(job), v.s.sup.IsPaused(job)
}

func (v daemonView) Running(job string) (Run, bool) {
	st := v.folded(job)
	return Run{RunID: st.RunID, PID: st.PID, Started: st.StartedAt, Deadline: st.Deadline,
		Attempt: st.Attempt, MaxAttempts: st.MaxAttempts, Slow: st.Slow, SlowReason: st.SlowReason,
		Progress: st.Progress, LastBeat: st.LastBeatAt, Resources: st.Resources}, st.RunID != ""
}

func (v daemonView) Retrying(job string) (Retry, bool) {
	st := v.folded(job)
	return Retry{At: st.RetryAt, Attempt: st.Attempt, MaxAttempts: st.MaxAttempts}, st.State == ctl.StateRetrying
}

func (v daemonView) Queued(job string) bool { return v.s.sup.Queued(job) }

func (v daemonView) NextFires() map[string]time.Time {
	if v.s.sched == nil {
		return nil
	}
	return v.s.sched.NextFires()
}

func (v daemonView) Stalls() map[string]run.Stall {
	if v.s.sched == nil {
		return nil
	}
	return v.s.sched.Stalls()
}

// Locks implements ctl.Backend: the configured locks and any other lock
// file, free ones included.
func (s *Service) Locks(ctx context.Context) ([]ctl.LockStatus, error) {
	all, err := ListLocks(ctx, s.locker, s.cfg.Load().Jobs)
	out := make([]ctl.LockStatus, 0, len(all))
	for _, l := range all {
		out = append(out, LockStatusOf(l))
	}
	return out, err
}

// History implements ctl.Backend.
func (s *Service) History(ctx context.Context, q ctl.HistoryQuery) ([]run.Record, error) {
	if s.store == nil {
		return nil, fmt.Errorf("history store unavailable")
	}
	limit := q.Limit
	if limit == 0 {
		limit = 100
	}
	f := history.Filter{Job: q.Job, Outcomes: q.Outcomes, Since: q.Since, Limit: limit}
	if s.shared != nil {
		sctx, cancel := context.WithTimeout(ctx, sharedWait)
		recs, err := s.shared.Query(sctx, f)
		cancel()
		if err == nil {
			return recs, nil
		}
	}
	return s.store.Query(ctx, f)
}

// Log implements ctl.Backend: the run's saved log in the state dir, which
// any job's run may have, also a job no longer in jobs.yaml.
func (s *Service) Log(_ context.Context, job, runID string) (ctl.RunLog, error) {
	return ReadRunLog(s.cfg.Load().StateDir, job, runID)
}

// Reload implements ctl.Backend.
func (s *Service) Reload(ctx context.Context) error { return s.reload(ctx) }

// Wait blocks until the run-now fires have ended.
func (s *Service) Wait() { s.runs.Wait() }
