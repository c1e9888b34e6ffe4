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
)

// execute runs the job's command under lease (nil for overlap allow),
// records it (see Recorder) and reports RunStarted, RunOutput lines and
// RunFinished. execDone is called on this goroutine once the child has
// exec'd. recorded says that the end's record is durable.
func (s *Supervisor) execute(ctx context.Context, job config.Job, slot time.Time, runID string, manual bool, lease lock.Lease, execDone func(), attempt int) (f RunFinished, recorded bool) {
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
	run := &activeRun{job: job.Name, runID: runID, started: s.clock.Now(), cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	s.active[runID] = run
	s.mu.Unlock()
	defer func() {
		// Release before announcing the end: a replacing fire waits on
		// done and then takes the lock, which must be free by then. A run
		// with another attempt to come keeps it (see attempts); until the
		// end is durable, the lock record says in flight.
		if lease != nil && !f.Retrying {
			s.release(lease, recorded)
		}
		s.mu.Lock()
		delete(s.active, runID)
		s.mu.Unlock()
		close(run.done)
	}()

	var startedAt time.Time // set by OnStart, read after proc.Run returns
	lastOK, knownLastOK := s.lastOKSlot(ctx, job.Name, lease)
	var stderrTail lastStderr
	spec := proc.Spec{
		Argv:       job.Command,
		Dir:        job.Dir,
		Env:        s.environ(job, runID, slot, deadline, lastOK, lease, attempt),
		KillGrace:  job.KillGrace,
		Tag:        "CRONVISOR_RUN_ID=" + runID,
		Credential: credential(job.RunAs),
		OnStart: func(pid int) {
			execDone()
			startedAt = s.clock.Now()
			if lease != nil {
				setHolderPID(lease, runID, pid, attempt)
			}
			ev := RunStarted{Job: job.Name, RunID: runID, Slot: slot, Started: startedAt,
				Deadline: deadline, PID: pid, Lock: job.Lock, Manual: manual, LogOutput: job.LogOutput, Attempt: attempt}
			s.rec.Started(ev)
			s.emit(ev)
		},
		OnOutput: func(stream, lines string) {
			stderrTail.see(stream, lines)
			ev := RunOutput{Job: job.Name, RunID: runID, Time: s.clock.Now(), Stream: stream, Line: lines}
			s.rec.Output(ev)
			s.emit(ev)
		},
	}
	if lease != nil && lease.File() != nil {
		spec.ExtraFiles = []*os.File{lease.File()}
	}
	if t, ok := lease.(lock.Tethered); ok {
		// No process of the run holds such a lease: if this supervisor
		// dies, the guard ends the run before the lease can expire.
		spec.Guard = &proc.Guard{Within: t.MinLifeLeft()}
	}
	var lostLease atomic.Bool
	if lease != nil && lease.Lost() != nil {
		go func() {
			select {
			case <-lease.Lost():
				lostLease.Store(true)
				if job.OnLockLost != config.LockLostContinue {
					cancel(lockLost(lease))
				}
			case <-runCtx.Done():
			}
		}()
	}
	stopWarn := s.warnSlow(runCtx, job, runID, slot, attempt)
	res := proc.Run(runCtx, spec)
	stopWarn()
	f = finished(job, runID, slot, manual, res)
	f.Attempt = attempt
	stderrTail.annotate(&f)
	if lostLease.Load() && job.OnLockLost == config.LockLostContinue {
		f.Reason = strings.TrimPrefix(f.Reason+"; lock lost during the run, continued unguarded (on_lock_lost: continue)", "; ")
	}
	f.Started, f.Ended = startedAt, s.clock.Now()
	if f.Outcome == OutcomeOK {
		lastOK = slot
	}
	_, vouched := lease.(lock.Preceded) // only such a lease can show the memo current
	s.rememberLastOK(job.Name, runID, lastOK, knownLastOK && vouched)
	s.planRetry(ctx, job, &f)
	// The end is recorded here, before the deferred release: a run whose
	// lock is free has its end recorded, whatever the observers of emit do.
	recorded = s.recordEnd(f, lease != nil)
	s.emit(f)
	return f, recorded
}

// lockLost is the cause that ends a run whose lease was lost. A Tethered
// lease is declared lost with MinLifeLeft still to go: the run must be
// gone by then, as its guard would make it if this supervisor had died.
func lockLost(lease lock.Lease) error {
	if t, ok := lease.(lock.Tethered); ok {
		return &proc.Urgent{Err: ErrLockLost, Within: t.MinLifeLeft()}
	}
	return ErrLockLost
}

// lastOKSlot is the job's last-ok slot for CRONVISOR_LAST_OK_SLOT (zero if
// none), and whether it is known: from the memo when the lease proves that
// the memo's run was the lock's last holder, else from the history store.
func (s *Supervisor) lastOKSlot(ctx context.Context, job string, lease lock.Lease) (time.Time, bool) {
	if s.lastOK == nil {
		return time.Time{}, false
	}
	if p, ok := lease.(lock.Preceded); ok {
		if prev, ok := p.PreviousHolder(); ok && prev.SupervisorPID == s.pid && prev.Host == s.host && prev.RunID != "" {
			s.mu.Lock()
			m, ok := s.lastOKs[job]
			s.mu.Unlock()
			if ok && m.runID == prev.RunID {
				return m.slot, true
			}
		}
	}
	t, err := s.lastOK(ctx, job)
	return t, err == nil
}

// rememberLastOK records what a run leaves as its job's last-ok slot, or
// forgets it when the run took no lock that would vouch for it or the
// slot was unknown. Before the lock's release, so that the next holder
// finds the memo written.
func (s *Supervisor) rememberLastOK(job, runID string, slot time.Time, keep bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if keep {
		s.lastOKs[job] = lastOKMemo{runID: runID, slot: slot}
	} else {
		delete(s.lastOKs, job)
	}
}

// finished maps a process result to the contract's outcomes.
func finished(job config.Job, runID string, slot time.Time, manual bool, res proc.Result) RunFinished {
	f := RunFinished{Job: job.Name, RunID: runID, Slot: slot, PID: res.PID, Manual: manual}
	if res.ExitCode >= 0 {
		code := res.ExitCode // 126/127 for start failures, like a shell
		f.ExitCode = &code
	}
	switch res.Outcome {
	case proc.Exited:
		f.Outcome = OutcomeOK
		if res.ExitCode != 0 {
			f.Outcome = OutcomeFailed
			f.Reason = exitReason(res)
		}
	case proc.TimedOut:
		f.Outcome = OutcomeTimeout
		f.Reason = "exceeded timeout " + job.Timeout.String()
	case proc.Canceled:
		f.Outcome = OutcomeInterrupted
		if errors.Is(res.Err, ErrReplaced) {
			f.Outcome = OutcomeReplaced
		}
		if res.Err != nil {
			f.Reason = res.Err.Error()
		}
	case proc.StartFailed:
		f.Outcome = OutcomeError
		f.Err = fmt.Errorf("%w: %w", ErrStartFailed, res.Err)
		f.Reason = f.Err.Error()
	}
	return f
}

func exitReason(res proc.Result) string {
	if res.Signal != "" {
		return "ended by signal " + res.Signal
	}
	return ""
}

// environ is the supervisor's environment without its secrets, then the
// contract's CRONVISOR_* variables, then the job's env on top.
func (s *Supervisor) environ(job config.Job, runID string, slot, deadline, lastOKSlot time.Time, lease lock.Lease, attempt int) []string {
	lockFD := lease != nil && lease.File() != nil
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
		"CRONVISOR_RUN_ID":       runID,
		"CRONVISOR_SCHEDULED_AT": slot.Format(time.RFC3339Nano),
		"CRONVISOR_DEADLINE":     dl,
		"CRONVISOR_LAST_OK_SLOT": lastOK,
		"CRONVISOR_ATTEMPT":      strconv.Itoa(max(attempt, 1)),
	} {
		vars[k] = v
	}
	if fenced, ok := lease.(interface{ FencingToken() int64 }); ok {
		// Grows with every acquisition: a database can refuse writes that
		// carry an older token than one it has seen (a stale holder).
		vars["CRONVISOR_FENCING_TOKEN"] = strconv.FormatInt(fenced.FencingToken(), 10)
	}
	if lockFD {
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
