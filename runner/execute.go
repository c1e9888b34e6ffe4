package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/lock"
	"cronvisor/internal/proc"
)

// attempt runs one attempt of f: its command under f's grant (the zero
// Grant for overlap allow), recorded (see Recorder) and reported as
// run.Start, run.Output lines and run.End.
func (s *Supervisor) attempt(ctx context.Context, f *fire) (end run.End) {
	a := s.prepare(ctx, f)
	recorded := false
	defer func() { s.retire(f, a, end, recorded) }()
	a.lost, a.watched = watchLease(f, a)
	stopWarn := s.warnSlow(a.ctx, f)
	res := proc.Run(a.ctx, a.spec)
	stopWarn()
	if res.Outcome == proc.Detached {
		// Handed over: its keeper sees it to the end and the next
		// supervisor records it; its lock stays as it is, in flight.
		end = f.end()
		end.PID, end.Attempt, end.Detached = res.PID, f.attempt, true
		return end
	}
	end, recorded = s.conclude(ctx, f, a, res)
	return end
}

// attemptRun is one attempt's own state, from prepare to retire.
type attemptRun struct {
	// ctx is the run's: it outlives the scheduler's context on purpose
	// (shutdown lets runs finish within shutdown_grace, then ends them
	// with ErrShutdown) and ends at the job's timeout.
	ctx      context.Context
	cancel   context.CancelCauseFunc
	stop     context.CancelFunc // the timeout's
	deadline time.Time          // zero: none
	active   *activeRun
	spec     proc.Spec
	lost     *atomic.Bool // the lease was lost during the run (watchLease)
	watched  func()       // waits for the lease watch, which ends with ctx

	lastOK      time.Time // the job's last ok slot before this run
	knownLastOK bool
	startedAt   time.Time // set by OnStart, read after proc.Run returns
	stderr      lastStderr
}

// prepare readies f's attempt: its deadline, its entry among the active
// runs (Kill and replace find it there), its environment and keeper.
func (s *Supervisor) prepare(ctx context.Context, f *fire) *attemptRun {
	a := &attemptRun{stop: func() {}, watched: func() {}}
	a.ctx, a.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	if f.job.Timeout > 0 {
		a.deadline = s.clock.Now().Add(f.job.Timeout)
		a.ctx, a.stop = context.WithTimeout(a.ctx, f.job.Timeout)
	}
	a.active = &activeRun{job: f.job.Name, runID: f.runID, started: s.clock.Now(), cancel: a.cancel, done: make(chan struct{})}
	s.mu.Lock()
	s.active[f.runID] = a.active
	s.mu.Unlock()
	a.lastOK, a.knownLastOK = s.memo.Lookup(ctx, f.job.Name, f.grant)
	a.spec = s.spec(f, a)
	return a
}

// spec is the process f's attempt runs, with the callbacks that record
// and report its start and output.
func (s *Supervisor) spec(f *fire, a *attemptRun) proc.Spec {
	job := &f.job
	spec := proc.Spec{
		Argv:       job.Command,
		Dir:        job.Dir,
		Env:        s.environ(f, a.deadline, a.lastOK),
		KillGrace:  job.KillGrace,
		Tag:        run.Tag(f.runID),
		Credential: credential(job.RunAs),
		Setup:      setup(job.Limits),
		Cgroup:     s.cgroup,
		Limits:     cgroupLimits(job.Limits),
		Warn:       s.containmentWarn(f),
		OnStart: func(pid int) {
			s.execed(f)
			a.startedAt = s.clock.Now()
			if f.grant.Lease != nil {
				setHolderPID(f.grant.Lease, f.runID, pid, f.attempt)
			}
			ev := run.Start{Job: job.Name, RunID: f.runID, Slot: f.slot, Started: a.startedAt,
				Deadline: a.deadline, PID: pid, Lock: job.Lock, Manual: f.manual, LogOutput: job.LogOutput, Attempt: f.attempt,
				InFlightRecorded: f.grant.RecordsInFlight}
			ev.Resources, ev.ResourceWait = s.slotsStarted(f, pid)
			s.rec.Started(ev)
			s.emit(ev)
		},
		OnOutput: func(stream, lines string) {
			a.stderr.see(stream, lines)
			ev := run.Output{Job: job.Name, RunID: f.runID, Time: s.clock.Now(), Stream: stream, Line: lines}
			s.rec.Output(ev)
			s.emit(ev)
		},
	}
	spec.Heartbeat = s.heartbeat(f)
	switch g := f.grant; {
	case g.File != nil:
		spec.ExtraFiles = []*os.File{g.File}
	case g.Session != nil:
		// The lock's session socket as fd 3, as the flock file is:
		// the server keeps the session, and the lock, while any process
		// of the run holds it, whoever else dies.
		spec.ExtraFiles = []*os.File{g.Session}
	}
	if f.held != nil {
		spec.SlotFiles = f.held.Files() // fd 5, 6, …: see proc.SlotFD
	}
	spec.Keeper, spec.Keepers = s.keeper(f), s.keepers
	return spec
}

// heartbeat is the heartbeat pipe of f's run: every run has one, so that
// `cronvisor heartbeat` shows progress without a heartbeat_timeout. Its
// beats reach the observers as run.Beat, at most one per proc.BeatEvery.
func (s *Supervisor) heartbeat(f *fire) *proc.Heartbeat {
	job, runID := f.job.Name, f.runID
	return &proc.Heartbeat{Timeout: f.job.HeartbeatTimeout, OnBeat: func(b proc.Beat) {
		s.emit(run.Beat{Job: job, RunID: runID, Time: s.clock.Now(), Progress: b.Progress})
	}}
}

// conclude turns the attempt's result into its end: the outcome, the
// last-ok cursor, whether a retry follows; then records and reports it.
// The end is recorded here, before retire releases the lock: a run whose
// lock is free has its end recorded, whatever the observers of emit do.
// recorded says that the end's record is durable.
func (s *Supervisor) conclude(ctx context.Context, f *fire, a *attemptRun, res proc.Result) (end run.End, recorded bool) {
	end = finished(f, res)
	a.stderr.annotate(&end)
	if a.lost.Load() && f.job.OnLockLost == config.LockLostContinue {
		end.Reason = strings.TrimPrefix(end.Reason+"; lock lost during the run, continued unguarded (on_lock_lost: continue)", "; ")
	}
	end.Started, end.Ended = a.startedAt, s.ended(res, a.startedAt)
	lastOK := a.lastOK
	if end.Outcome == run.OK {
		lastOK = f.slot
	}
	s.memo.Remember(f.job.Name, f.runID, lastOK, a.knownLastOK, f.grant)
	s.planRetry(ctx, f.job, &end)
	if end.Retrying {
		s.holdRetry(ctx, f)
	}
	recorded = s.endFire(end, f.grant.Lease != nil)
	return end, recorded
}

// retire ends f's attempt once its end is reported. It releases the lock
// before it closes done: a replacing fire waits on done and then takes
// the lock, which must be free by then. A run with another attempt to
// come keeps it (see withRetries); until the end is durable (recorded),
// the lock record says in flight.
func (s *Supervisor) retire(f *fire, a *attemptRun, end run.End, recorded bool) {
	if !end.Retrying && !end.Detached {
		s.releaseSlots(f)
	}
	if f.grant.Lease != nil && !end.Retrying && !end.Detached {
		s.release(f.grant.Lease, end, recorded)
	}
	s.mu.Lock()
	delete(s.active, f.runID)
	s.mu.Unlock()
	close(a.active.done)
	a.stop()
	a.cancel(nil)
	a.watched()
}

// watchLease ends a's run (a.cancel) when f's lease, or one of its
// resource slots', is lost, unless the job says to continue; the flag
// tells whether one was lost. Its goroutines return with the run
// (a.ctx); wait waits for them.
func watchLease(f *fire, a *attemptRun) (lost *atomic.Bool, wait func()) {
	lost = new(atomic.Bool)
	onLost, runCtx, cancel := f.job.OnLockLost, a.ctx, a.cancel
	var wg sync.WaitGroup
	for _, g := range f.grants() {
		if g.Lost == nil {
			continue
		}
		wg.Go(func() {
			select {
			case <-g.Lost:
				lost.Store(true)
				if onLost != config.LockLostContinue {
					cancel(lockLost(g))
				}
			case <-runCtx.Done():
			}
		})
	}
	return lost, wg.Wait
}

// ended is when the run ended on the supervisor's clock: the process's own
// end where its keeper saw it (res.Exited, maybe before the noted start),
// not when this supervisor got to see it, frozen or starved meanwhile.
func (s *Supervisor) ended(res proc.Result, started time.Time) time.Time {
	now := s.clock.Now()
	if res.Exited.IsZero() {
		return now
	}
	if end := now.Add(-max(time.Since(res.Exited), 0)); !end.Before(started) {
		return end
	}
	return started
}

// keeper is the keeper of a run: with a state dir, every run has one,
// which sees it to its deadline and writes its end there if this
// supervisor dies first. A run under an SQL session lock whose connection
// the keeper can hold (Grant.Session) goes on, the session with it; one
// under a Redis lease goes on with the keeper renewing it (Grant.Handoff);
// any other lease nothing of the run holds (Tethered) is ended at once,
// before it can expire. Without a state dir (tests), only Tethered runs
// have one, which ends them.
func (s *Supervisor) keeper(f *fire) *proc.Keeper {
	var k proc.Keeper
	g, job := s.keeperLease(f), &f.job
	switch {
	case g.Session != nil:
		k.Session = g.Session // the keeper holds the lock's session: the run may go on
	case g.Handoff != nil && s.stateDir != "":
		k.Handoff, k.Within = g.Handoff, g.MinLifeLeft // the keeper renews the lease: the run may go on
	case g.Tethered:
		k.EndAtOnce, k.Within = true, g.MinLifeLeft
	case s.stateDir == "":
		return nil
	}
	if s.stateDir != "" {
		k.Run = proc.KeptRun{Job: job.Name, Slot: f.slot, Attempt: max(f.attempt, 1), Manual: f.manual}
		if job.Timeout > 0 {
			// The wall clock's: the keeper's deadline is real time.
			k.Deadline, k.Timeout = time.Now().Add(job.Timeout), job.Timeout
		}
		k.End, k.NoSync = s.stateDir.RunEnd(f.runID), s.noSync
		k.Log, k.LogLimit = s.stateDir.RunLog(job.Name, f.runID), s.logLimit
	}
	return &k
}

// lockLost is the cause that ends a run whose lease was lost. A Tethered
// lease is declared lost with MinLifeLeft still to go: the run must be
// gone by then, as its guard would make it if this supervisor had died.
func lockLost(g lock.Grant) error {
	if g.Tethered {
		return &proc.Urgent{Err: ErrLockLost, Within: g.MinLifeLeft}
	}
	return ErrLockLost
}

// finished maps a process result of f's attempt to the contract's
// outcomes, with what it cost.
func finished(f *fire, res proc.Result) run.End {
	end := f.end()
	end.PID, end.Attempt = res.PID, f.attempt
	if res.ExitCode >= 0 {
		code := res.ExitCode // 126/127 for start failures, like a shell
		end.ExitCode = &code
	}
	switch res.Outcome {
	case proc.Exited:
		end.Outcome = run.OK
		if res.ExitCode != 0 {
			end.Outcome = run.Failed
			end.Reason = exitReason(res)
		}
	case proc.TimedOut:
		end.Outcome = run.Timeout
		end.Reason = "exceeded timeout " + f.job.Timeout.String()
		if errors.Is(res.Err, proc.ErrNoHeartbeat) {
			end.Reason = proc.NoHeartbeatReason(f.job.HeartbeatTimeout)
		}
	case proc.Canceled:
		end.Outcome = run.Interrupted
		if errors.Is(res.Err, ErrReplaced) {
			end.Outcome = run.Replaced
		}
		if res.Err != nil {
			end.Reason = res.Err.Error()
		}
		end.Class = classOf(res.Err)
	case proc.StartFailed:
		end.Outcome, end.Class = run.Error, run.ClassStartFailed
		end.Reason = fmt.Errorf("%w: %w", ErrStartFailed, res.Err).Error()
	}
	end.Usage, end.Progress = res.Usage, res.Beat.Progress
	if end.Outcome != run.OK {
		// Ended by the OOM killer: the reason says so (a run whose
		// main process still exited 0 says it in its usage alone).
		end.Reason = res.Usage.WithOOM(end.Reason)
	}
	return end
}

// classOf is the class of the cause that ended a run early.
func classOf(cause error) run.Class {
	for _, c := range []struct {
		err   error
		class run.Class
	}{{ErrReplaced, run.ClassReplaced}, {ErrShutdown, run.ClassShutdown}, {ErrKilled, run.ClassKilled}, {ErrLockLost, run.ClassLockLost}} {
		if errors.Is(cause, c.err) {
			return c.class
		}
	}
	return ""
}

func exitReason(res proc.Result) string {
	if res.Signal != "" {
		return "ended by signal " + res.Signal
	}
	return ""
}

// environ is the supervisor's environment without its secrets, then the
// contract's CRONVISOR_* variables, then the job's env on top.
func (s *Supervisor) environ(f *fire, deadline, lastOKSlot time.Time) []string {
	job, g := &f.job, f.grant
	var lastOK string
	if !lastOKSlot.IsZero() {
		lastOK = lastOKSlot.Format(time.RFC3339Nano)
	}
	dl := ""
	if !deadline.IsZero() {
		dl = deadline.Format(time.RFC3339Nano)
	}
	vars := make(map[string]string, len(job.Env)+10)
	accountEnv(vars, *job)
	maps.Copy(vars, job.Env)
	// The contract's variables win over the job's env: the run id also tags
	// the run's processes so that escaped descendants can be found.
	for k, v := range map[string]string{
		"CRONVISOR_JOB":          job.Name,
		run.EnvID:                f.runID,
		"CRONVISOR_SCHEDULED_AT": f.slot.Format(time.RFC3339Nano),
		"CRONVISOR_DEADLINE":     dl,
		"CRONVISOR_LAST_OK_SLOT": lastOK,
		"CRONVISOR_ATTEMPT":      strconv.Itoa(max(f.attempt, 1)),
	} {
		vars[k] = v
	}
	if g.FencingToken != 0 {
		// Grows with every acquisition: a database can refuse writes that
		// carry an older token than one it has seen (a stale holder).
		vars["CRONVISOR_FENCING_TOKEN"] = strconv.FormatInt(g.FencingToken, 10)
	}
	if g.File != nil {
		// The locked file is fd 3 in the child; jobs may leave it alone.
		vars["CRONVISOR_LOCK_FD"] = "3"
	}
	if slots := slotsEnv(f); slots != "" {
		vars["CRONVISOR_RESOURCES"] = slots
	}
	inherited := os.Environ() // a copy each call: made once
	env := make([]string, 0, len(inherited)+len(vars))
	for _, kv := range inherited {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := vars[k]; !over && !s.secretEnv[k] && k != "CRONVISOR_RESOURCES" {
			env = append(env, kv)
		}
	}
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+vars[k])
	}
	return env
}

// InRun tells whether process pid belongs to run runID: every process of
// a run inherits its tag (run.Tag) from the run's main process. It is the
// predicate the lock's file backend asks about a survivor holding a lock
// whose supervisor died.
func InRun(pid int, runID string) bool { return procfs.HasEnv(pid, []byte(run.Tag(runID))) }
