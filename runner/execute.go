package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"cronvisor/config"
	"cronvisor/lock"
	"cronvisor/proc"
	"cronvisor/procfs"
	"cronvisor/run"
	"cronvisor/statedir"
)

// execute runs the job's command under g (the zero Grant for overlap allow),
// records it (see Recorder) and reports run.Start, run.Output lines and
// run.End. execDone is called on this goroutine once the child has
// exec'd. recorded says that the end's record is durable.
func (s *Supervisor) execute(ctx context.Context, job config.Job, slot time.Time, runID string, manual bool, g lock.Grant, execDone func(), attempt int) (f run.End, recorded bool) {
	// Runs outlive the scheduler's context on purpose: shutdown lets them
	// finish within shutdown_grace, then ends them with ErrShutdown.
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	var deadline time.Time
	if job.Timeout > 0 {
		deadline = s.clock.Now().Add(job.Timeout)
		var stop context.CancelFunc
		runCtx, stop = context.WithTimeout(runCtx, job.Timeout)
		defer stop()
	}
	active := &activeRun{job: job.Name, runID: runID, started: s.clock.Now(), cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	s.active[runID] = active
	s.mu.Unlock()
	defer func() {
		// Release before announcing the end: a replacing fire waits on
		// done and then takes the lock, which must be free by then. A run
		// with another attempt to come keeps it (see attempts); until the
		// end is durable, the lock record says in flight.
		if g.Lease != nil && !f.Retrying && !f.Detached {
			s.release(g.Lease, recorded)
		}
		s.mu.Lock()
		delete(s.active, runID)
		s.mu.Unlock()
		close(active.done)
	}()

	var startedAt time.Time // set by OnStart, read after proc.Run returns
	lastOK, knownLastOK := s.memo.Lookup(ctx, job.Name, g)
	var stderrTail lastStderr
	spec := proc.Spec{
		Argv:       job.Command,
		Dir:        job.Dir,
		Env:        s.environ(job, runID, slot, deadline, lastOK, g, attempt),
		KillGrace:  job.KillGrace,
		Tag:        run.Tag(runID),
		Credential: credential(job.RunAs),
		OnStart: func(pid int) {
			execDone()
			startedAt = s.clock.Now()
			if g.Lease != nil {
				setHolderPID(g.Lease, runID, pid, attempt)
			}
			ev := run.Start{Job: job.Name, RunID: runID, Slot: slot, Started: startedAt,
				Deadline: deadline, PID: pid, Lock: job.Lock, Manual: manual, LogOutput: job.LogOutput, Attempt: attempt,
				InFlightRecorded: g.RecordsInFlight}
			s.rec.Started(ev)
			s.emit(ev)
		},
		OnOutput: func(stream, lines string) {
			stderrTail.see(stream, lines)
			ev := run.Output{Job: job.Name, RunID: runID, Time: s.clock.Now(), Stream: stream, Line: lines}
			s.rec.Output(ev)
			s.emit(ev)
		},
	}
	if g.File != nil {
		spec.ExtraFiles = []*os.File{g.File}
	}
	spec.Keeper = s.keeper(job, runID, slot, manual, attempt, g)
	lostLease := watchLease(runCtx, cancel, job, g)
	stopWarn := s.warnSlow(runCtx, job, runID, slot, attempt)
	res := proc.Run(runCtx, spec)
	stopWarn()
	if res.Outcome == proc.Detached {
		// Handed over: its keeper sees it to the end and the next
		// supervisor records it; its lock stays as it is, in flight.
		return run.End{Job: job.Name, RunID: runID, Slot: slot, PID: res.PID, Manual: manual, Attempt: attempt, Detached: true}, false
	}
	f = finished(job, runID, slot, manual, res)
	f.Attempt = attempt
	stderrTail.annotate(&f)
	if lostLease.Load() && job.OnLockLost == config.LockLostContinue {
		f.Reason = strings.TrimPrefix(f.Reason+"; lock lost during the run, continued unguarded (on_lock_lost: continue)", "; ")
	}
	f.Started, f.Ended = startedAt, s.ended(res)
	if f.Outcome == run.OK {
		lastOK = slot
	}
	s.memo.Remember(job.Name, runID, lastOK, knownLastOK, g)
	s.planRetry(ctx, job, &f)
	// The end is recorded here, before the deferred release: a run whose
	// lock is free has its end recorded, whatever the observers of emit do.
	recorded = s.recordEnd(f, g.Lease != nil)
	s.emit(f)
	return f, recorded
}

// watchLease ends the run (cancel) when g's lease is lost, unless the
// job says to continue; the flag tells whether it was lost. Its goroutine
// returns with the run (runCtx).
func watchLease(runCtx context.Context, cancel context.CancelCauseFunc, job config.Job, g lock.Grant) *atomic.Bool {
	var lost atomic.Bool
	if g.Lost == nil {
		return &lost
	}
	go func() {
		select {
		case <-g.Lost:
			lost.Store(true)
			if job.OnLockLost != config.LockLostContinue {
				cancel(lockLost(g))
			}
		case <-runCtx.Done():
		}
	}()
	return &lost
}

// ended is when the run ended on the supervisor's clock: the process's own
// end where its keeper saw it (res.Exited), not when this supervisor got
// to see it, frozen or starved meanwhile.
func (s *Supervisor) ended(res proc.Result) time.Time {
	now := s.clock.Now()
	if res.Exited.IsZero() {
		return now
	}
	return now.Add(-max(time.Since(res.Exited), 0))
}

// keeper is the keeper of a run: with a state dir, every run has one,
// which sees it to its deadline and writes its end there if this
// supervisor dies first. A run under an SQL session lock whose connection
// the keeper can hold (Grant.Session) goes on, the session with it; one
// under a Redis lease goes on with the keeper renewing it (Grant.Handoff);
// any other lease nothing of the run holds (Tethered) is ended at once,
// before it can expire. Without a state dir (tests), only Tethered runs
// have one, which ends them.
func (s *Supervisor) keeper(job config.Job, runID string, slot time.Time, manual bool, attempt int, g lock.Grant) *proc.Keeper {
	var k proc.Keeper
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
		k.Run = proc.KeptRun{Job: job.Name, Slot: slot, Attempt: max(attempt, 1), Manual: manual}
		if job.Timeout > 0 {
			// The wall clock's: the keeper's deadline is real time.
			k.Deadline, k.Timeout = time.Now().Add(job.Timeout), job.Timeout
		}
		k.End = statedir.RunEnd(s.stateDir, runID)
		k.Log = statedir.RunLog(s.stateDir, job.Name, runID)
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

// finished maps a process result to the contract's outcomes.
func finished(job config.Job, runID string, slot time.Time, manual bool, res proc.Result) run.End {
	f := run.End{Job: job.Name, RunID: runID, Slot: slot, PID: res.PID, Manual: manual}
	if res.ExitCode >= 0 {
		code := res.ExitCode // 126/127 for start failures, like a shell
		f.ExitCode = &code
	}
	switch res.Outcome {
	case proc.Exited:
		f.Outcome = run.OK
		if res.ExitCode != 0 {
			f.Outcome = run.Failed
			f.Reason = exitReason(res)
		}
	case proc.TimedOut:
		f.Outcome = run.Timeout
		f.Reason = "exceeded timeout " + job.Timeout.String()
	case proc.Canceled:
		f.Outcome = run.Interrupted
		if errors.Is(res.Err, ErrReplaced) {
			f.Outcome = run.Replaced
		}
		if res.Err != nil {
			f.Reason = res.Err.Error()
		}
		f.Class = classOf(res.Err)
	case proc.StartFailed:
		f.Outcome, f.Class = run.Error, run.ClassStartFailed
		f.Reason = fmt.Errorf("%w: %w", ErrStartFailed, res.Err).Error()
	}
	return f
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
func (s *Supervisor) environ(job config.Job, runID string, slot, deadline, lastOKSlot time.Time, g lock.Grant, attempt int) []string {
	var lastOK string
	if !lastOKSlot.IsZero() {
		lastOK = lastOKSlot.Format(time.RFC3339Nano)
	}
	dl := ""
	if !deadline.IsZero() {
		dl = deadline.Format(time.RFC3339Nano)
	}
	vars := make(map[string]string, len(job.Env)+10)
	accountEnv(vars, job)
	for k, v := range job.Env {
		vars[k] = v
	}
	// The contract's variables win over the job's env: the run id also tags
	// the run's processes so that escaped descendants can be found.
	for k, v := range map[string]string{
		"CRONVISOR_JOB":          job.Name,
		run.EnvID:                runID,
		"CRONVISOR_SCHEDULED_AT": slot.Format(time.RFC3339Nano),
		"CRONVISOR_DEADLINE":     dl,
		"CRONVISOR_LAST_OK_SLOT": lastOK,
		"CRONVISOR_ATTEMPT":      strconv.Itoa(max(attempt, 1)),
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
	env := make([]string, 0, len(os.Environ())+len(vars))
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := vars[k]; !over && !s.secretEnv[k] {
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
