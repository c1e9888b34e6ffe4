package runner

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/base/durations"
	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/semaphore"
	"cronvisor/internal/proc"
	"cronvisor/internal/proc/cgroup"
	"cronvisor/runner/ending"
)

// Causes a run can be ended with besides its deadline; they tell the outcome.
var (
	ErrReplaced = errors.New("replaced by a newer fire")
	ErrShutdown = errors.New("supervisor shutting down; shutdown_grace exceeded")
	ErrKilled   = errors.New("killed by operator")
	// ErrLockLost ends a run whose lease was lost (on_lock_lost: end).
	ErrLockLost = errors.New("lock lost")
	// ErrStartFailed wraps why a run's process could not be started.
	ErrStartFailed = errors.New("failed to start")
)

// queuePoll is how often a queued fire retries the lock. Polling keeps the
// queue working for holders outside this process (another supervisor,
// flock(1)), which cannot notify us.
const queuePoll = 50 * time.Millisecond

// Supervisor fires jobs through their guards: lock, deadline, overlap policy,
// process tree. It is safe for concurrent use; each Fire blocks until its
// run (or skip) is over.
type Supervisor struct {
	locker lock.Locker
	clock  clock.Clock
	rec    Recorder
	emit   func(run.Event)
	path   ending.Path // every fire's end and skip: rec, then emit
	log    *slog.Logger
	lastOK LastOKFunc // the memo's source, until NewSupervisor made the memo
	memo   *lastOKMemo
	host   string
	pid    int
	// secretEnv are variables of the supervisor's environment that jobs
	// do not inherit: the lock backend's credentials.
	secretEnv map[string]bool
	// cgroup, when set, gives every run a cgroup v2 leaf of its own
	// (WithCgroup); noCgroup says why not when it is nil.
	cgroup   *cgroup.Hierarchy
	noCgroup error

	starts *Starts
	// stateDir, when set, gives every run a keeper that outlives this
	// supervisor and writes the run's end there (see keeper).
	stateDir statedir.Dir
	keepers  *proc.Keepers             // the keeper processes of this supervisor's runs, with stateDir
	noSync   bool                      // durability: process (WithDurability)
	logLimit int64                     // the runs' log_limit, for their keepers (WithLogLimit)
	adopter  Adopter                   // nil: none
	learner  *durations.Learner        // nil: nothing learned (warn_after and warn_fast: auto judge nothing)
	owner    Ownership                 // nil: every scheduled fire is this host's
	sems     semaphore.Semaphores      // nil: no resources (WithSemaphores)
	combine  func(hs ...[]byte) []byte // WithHandoffCombiner; nil: none
	// fires is the way every fire takes (fireSteps), made once; resumes
	// a resumed slot's (resumeSteps).
	fires, resumes runFunc
	// handingOver: slots waiting for a retry are left to the next
	// supervisor (HandingOver).
	handingOver atomic.Bool

	mu     sync.Mutex
	active map[string]*activeRun // by run id
	queued map[string]bool       // job name -> a fire is waiting for the lock
	waits  map[*retryWait]bool   // slots waiting for their next attempt (Kill ends them)
	paused map[string]bool
}

type activeRun struct {
	job     string
	runID   string
	started time.Time
	cancel  context.CancelCauseFunc
	done    chan struct{}
}

// Option configures a Supervisor.
type Option func(*Supervisor)

// WithClock replaces the wall clock (tests).
func WithClock(c clock.Clock) Option { return func(s *Supervisor) { s.clock = c } }

// WithLastOK supplies the cursor for CRONVISOR_LAST_OK_SLOT.
func WithLastOK(f LastOKFunc) Option { return func(s *Supervisor) { s.lastOK = f } }

// WithKeepers gives every run a keeper process that, if this supervisor
// dies, sees the run to its end or deadline and writes its end under
// stateDir for the next supervisor to record.
func WithKeepers(stateDir string) Option {
	return func(s *Supervisor) { s.stateDir, s.keepers = statedir.Dir(stateDir), proc.NewKeepers() }
}

// WithDurability says whether what the run's keeper writes is synced
// (run.DurabilityMachine, the default) or not.
func WithDurability(d run.Durability) Option {
	return func(s *Supervisor) { s.noSync = !d.Syncs() }
}

// WithLogLimit is the log_limit the run log's writer keeps (history's
// WriterConfig.LogLimit): a run's keeper keeps it too once this
// supervisor is dead.
func WithLogLimit(n int64) Option { return func(s *Supervisor) { s.logLimit = n } }

// Close lets go of the supervisor's keeper process, once its runs are
// over or handed over (see proc.Keepers.Release): an idle one exits.
func (s *Supervisor) Close() {
	if s.keepers != nil {
		s.keepers.Release()
	}
}

// Adopter answers for the runs that a dead supervisor left running with
// their keepers (*recovery.Recoverer): this supervisor's overlap
// policies and Kill treat them as its own.
type Adopter interface {
	// AdoptedRuns lists the run ids of job's adopted runs.
	AdoptedRuns(job string) []string
	// EndAdopted ends adopted run runID (replaced, or killed by an
	// operator); false if runID is not adopted.
	EndAdopted(runID string, replaced bool) bool
}

// WithAdopter makes a's runs this supervisor's for replace and Kill.
func WithAdopter(a Adopter) Option { return func(s *Supervisor) { s.adopter = a } }

// Starts counts fires between their call and their child's exec (or
// their skip): a burst of starts when it is large. Made before the
// Supervisor, it is shared with those that look at it (the history
// Writer gathers a burst's writes).
type Starts struct{ n atomic.Int64 }

// Pending is how many fires are about to exec right now.
func (c *Starts) Pending() int { return int(c.n.Load()) }

// WithStarts counts the fires about to exec in c.
func WithStarts(c *Starts) Option { return func(s *Supervisor) { s.starts = c } }

// WithLogger logs what the Recorder could not record durably (default:
// nowhere).
func WithLogger(l *slog.Logger) Option { return func(s *Supervisor) { s.log = l } }

// WithSecretEnv keeps the named variables of the supervisor's environment
// (config.Config.SecretEnv: a password the lock backend's URL expanded)
// out of jobs' environments; a job whose own env sets one gets its value.
func WithSecretEnv(names ...string) Option {
	return func(s *Supervisor) {
		for _, n := range names {
			s.secretEnv[n] = true
		}
	}
}

// NewSupervisor returns a supervisor that takes locks from locker, records
// every fire through rec (see Recorder) and then reports its events to
// emit, the observers that may lose them (logs, status, the console). emit
// is called from run goroutines, some with a lock held, and must not block.
func NewSupervisor(locker lock.Locker, rec Recorder, emit func(run.Event), opts ...Option) *Supervisor {
	host, _ := os.Hostname()
	s := &Supervisor{
		locker: locker,
		clock:  clock.Real{},
		rec:    rec,
		emit:   emit,
		path:   ending.New(emit),
		log:    slog.New(slog.DiscardHandler),
		starts: &Starts{},
		host:   host,
		pid:    os.Getpid(),
		active: map[string]*activeRun{},
		queued: map[string]bool{},
		waits:  map[*retryWait]bool{},
		paused: map[string]bool{},

		secretEnv: map[string]bool{},
	}
	for _, o := range opts {
		o(s)
	}
	if s.learner != nil {
		s.path = ending.New(emit, ending.WithJudge(s.learner))
	}
	s.memo = newLastOKMemo(LastOKFunc(s.lastOK), s.host, s.pid)
	s.fires, s.resumes = s.fireSteps(), s.resumeSteps()
	return s
}

// Clock returns the supervisor's clock.
func (s *Supervisor) Clock() clock.Clock { return s.clock }

// Fire runs job for slot under its guards, applying its overlap policy, and
// returns how it ended. Manual fires (`cronvisor run`, run-now) never wait
// or replace: they run or skip, and do not consume the job's slot.
func (s *Supervisor) Fire(ctx context.Context, job config.Job, slot time.Time, manual bool) run.End {
	return s.FireWithID(ctx, job, slot, manual, run.NewID(s.clock.Now()))
}

// FireWithID is Fire with a run id chosen by the caller (run-now over the
// control socket answers with the id before the run ends).
func (s *Supervisor) FireWithID(ctx context.Context, job config.Job, slot time.Time, manual bool, runID string) run.End {
	return s.launch(ctx, &fire{job: job, slot: slot, runID: runID, manual: manual, starting: true})
}

// Trigger is FireWithID for `cronvisor trigger`: a fire under the rules
// of a scheduled one (a pause, the overlap policy, the slot check) whose
// records say manual, since no schedule owed it. forced (trigger
// --force) goes past the job's pause; whether it may is the caller's
// rule (service), and the overlap policy still applies.
func (s *Supervisor) Trigger(ctx context.Context, job config.Job, slot time.Time, runID string, forced bool) run.End {
	return s.launch(ctx, &fire{job: job, slot: slot, runID: runID, manual: true, triggered: true, forced: forced, starting: true})
}

// launch takes f through the supervisor's steps.
func (s *Supervisor) launch(ctx context.Context, f *fire) run.End {
	s.starts.n.Add(1)
	defer s.execed(f)
	return s.fires(ctx, f)
}

// notAdmitted records a fire refused by the admission check, after
// releasing the lock it took: the run never started, which the lock's
// record must not leave in doubt, and the history backlog that refused it
// may well not keep its record either. f's grant is zero when it took none.
func (s *Supervisor) notAdmitted(f *fire, err error) run.End {
	end := f.end()
	end.Ended, end.Outcome, end.Reason = s.clock.Now(), run.Error, "not started: "+err.Error()
	s.releaseUnrun(f, end)
	s.endFire(end, false)
	return end
}

// Starting is how many fires are between their call and their child's
// exec (or their skip) right now: a burst of starts when it is large.
func (s *Supervisor) Starting() int { return s.starts.Pending() }

// acquire takes f's lock; a scheduled fire's only if its slot has not
// run yet.
func (s *Supervisor) acquire(ctx context.Context, f *fire) (lock.Grant, error) {
	return s.locker.Acquire(ctx, lock.Request{
		Name:      f.job.Lock,
		Record:    lock.Record{Holder: run.Holder{PID: s.pid, Host: s.host, Job: f.job.Name, RunID: f.runID, Since: s.clock.Now()}, Slot: f.slot, SupervisorPID: s.pid},
		CheckSlot: !f.exempt() && !f.resumed, // a resumed slot is its own
	})
}

// refused turns a failed acquisition into the record that says why.
func (s *Supervisor) refused(f *fire, err error) run.End {
	var held *lock.HeldError
	var done *lock.SlotDoneError
	switch {
	case errors.As(err, &held):
		h := held.Record.Holder
		return s.skip(f, "lock held by "+h.String(), run.ClassLockHeld, &h)
	case errors.As(err, &done):
		h := done.Record.Holder
		return s.skip(f, slotDoneReason(f.job.Name, done), run.ClassSlotAlreadyRun, &h)
	case errors.Is(err, errQueueFull):
		return s.skip(f, err.Error(), run.ClassQueued, nil)
	case errors.Is(err, errQueueDropped):
		return s.skip(f, err.Error(), run.ClassDropped, nil)
	case errors.Is(err, context.Canceled):
		// The supervisor stopped while this fire was taking its lock.
		return s.skip(f, "supervisor stopping", run.ClassDropped, nil)
	case errors.Is(err, lock.ErrUnavailable):
		return s.skip(f, "lock backend unreachable ("+err.Error()+")", run.ClassBackendUnreachable, nil)
	}
	end := f.end()
	end.Ended, end.Outcome, end.Class = s.clock.Now(), run.Error, run.ClassBackendUnreachable
	end.Reason = "cannot take lock: " + err.Error()
	s.endFire(end, false)
	return end
}

// skip records and reports f as not run, for reason.
func (s *Supervisor) skip(f *fire, reason string, class run.Class, h *run.Holder) run.End {
	now := s.clock.Now()
	s.Skip(run.Skip{Job: f.job.Name, RunID: f.runID, Slot: f.slot, Time: now, Reason: reason, Class: class, Holder: h, Manual: f.manual,
		ResourceWait: f.resourceWait, Resource: f.fullResource})
	end := f.end()
	end.Ended, end.Outcome, end.Reason = now, run.Skipped, reason
	return end
}

// slotDoneReason is the reason of a fire whose slot was already run: by
// which run on which host, when the lock's record is that slot's run (not
// a later run of another job sharing the lock), and with the slot's
// outcome where the backend keeps it (the SQL slot ledger).
func slotDoneReason(job string, done *lock.SlotDoneError) string {
	reason := "slot already run"
	if h := done.Record.Holder; h.Job == job && h.RunID != "" {
		reason += " by run " + h.RunID + " on " + h.Host
	}
	if done.Outcome != "" {
		reason += " (outcome " + done.Outcome + ")"
	}
	return reason
}
