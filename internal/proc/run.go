package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/proc/cgroup"
)

// Outcome is how a run ended, from the executor's point of view; the runner
// maps it (with the exit code) onto the contract's history outcomes.
type Outcome string

// Outcomes of Run.
const (
	Exited      Outcome = "exited"       // the main process exited by itself (any code or signal)
	TimedOut    Outcome = "timed_out"    // ctx reached its deadline and the run was ended
	Canceled    Outcome = "canceled"     // ctx was canceled for another cause; see Result.Err
	StartFailed Outcome = "start_failed" // no process was started; see Result.Err
	Detached    Outcome = "detached"     // handed to its keeper (ErrDetach), still running
)

// ErrDetach, as the cause of ctx, hands a run that has a Keeper (not one
// that must end with its supervisor) over to it instead of ending it: Run
// stops reading its output, closes the tether and returns Detached, the
// run and its keeper going on. For a supervisor about to exit and leave
// its runs to the next one (an upgrade).
var ErrDetach = errors.New("proc: run handed over to its keeper")

// Exit codes for runs that could not start, following the shell so that
// `cronvisor run` passes on what sh would have.
const (
	ExitNotFound      = 127 // command, or its directory, does not exist
	ExitNotExecutable = 126 // found but could not be executed (permissions, format, E2BIG)
)

// ErrNoCommand is reported (as StartFailed) when Spec.Argv is empty.
var ErrNoCommand = errors.New("proc: empty command")

// ErrSurvivors is reported in Result.Err when processes of the run were still
// alive 5 s after SIGKILL (stuck in the kernel); the run's lock should not be
// trusted.
var ErrSurvivors = errors.New("proc: processes of the run survived SIGKILL")

// survivorWait bounds how long Run waits for SIGKILLed processes to vanish;
// only a process stuck in uninterruptible sleep takes longer.
const survivorWait = 5 * time.Second

// Spec describes one run.
type Spec struct {
	// Argv is exec'd directly; string commands arrive as {shell, "-c", cmd}.
	// A bare name is looked up in the PATH of Env (not the supervisor's).
	Argv []string
	// Dir is the working directory; empty means the supervisor's.
	Dir string
	// Env is the full environment of the run; nil means the supervisor's.
	Env []string
	// ExtraFiles become fd 3, 4, … in the child, the only descriptors it
	// gets beyond 0-2 (see CloseInheritedOnExec). ExtraFiles[0], if set, is
	// what holds the run's lock: its lock file (read-only, lock.Grant.File)
	// or its SQL lock's session socket (lock.Grant.Session); processes
	// sharing its open file description belong to the run. It must stay
	// open in the caller until Run returns.
	ExtraFiles []*os.File
	// SlotFiles become fd SlotFD (5), 6, … in the child, whatever else it
	// has: after the lock's fd 3 and the heartbeat's fd 4, each closed
	// when the run has none, so that a job finds its resource slots
	// (CRONVISOR_RESOURCES, in the same order) at the same numbers on
	// every run. They hold the slots as ExtraFiles[0] holds the lock.
	SlotFiles []*os.File
	// KillGrace is the delay between SIGTERM and SIGKILL; zero sends SIGKILL
	// right after SIGTERM.
	KillGrace time.Duration
	// Tag is a "KEY=VALUE" entry that marks every process of this run (e.g.
	// CRONVISOR_RUN_ID=…). It is appended to Env if Env lacks it. Empty
	// disables the environment scan.
	Tag string
	// OnStart, if set, is called with the main pid right after it started.
	OnStart func(pid int)
	// OnOutput, if set, gets the output as it is read: one or more whole
	// lines joined by "\n", without the last one's line ending (CRLF
	// endings become "\n"); stream is "stdout" or "stderr". Lines over
	// 64 KiB arrive in pieces, each in a call of its own. Calls are
	// serialized and all happen before Run returns. It must be fast:
	// while it blocks, the pipe fills and the job blocks writing.
	OnOutput func(stream, lines string)
	// Credential, if set, is the user, group and supplementary groups
	// the run's processes get (changing them takes root). Descriptors,
	// pipes and the guard stay this process's: the run writes to what it
	// was handed, and the guard, running as this process's user, can
	// still signal it when that is root.
	Credential *syscall.Credential
	// Keeper, if set, starts a keeper process beside the run, which
	// guards it in this process's place if this process dies first (see
	// the package doc). The run itself is started exactly as without it.
	Keeper *Keeper
	// Keepers is the pool whose keeper process keeps the run (Keeper);
	// nil: the process's own.
	Keepers *Keepers
	// Setup, if set, is applied to the run's first process before it
	// execs Argv (nice, ionice, oom_score_adj, rlimits; see setup.go).
	Setup *Setup
	// Cgroup, if set, is the hierarchy in which the run gets a cgroup v2
	// leaf of its own ("run-RUNID"), its main process started straight
	// into it: no process of the run is ever outside it. The run is then
	// ended through the leaf (SIGTERM to all of it, cgroup.kill after
	// KillGrace), over only once the leaf is empty, measured
	// (Result.Usage) and the leaf removed. A leaf that cannot be made
	// leaves the run to its process tree, as without Cgroup.
	Cgroup *cgroup.Hierarchy
	// Limits are written into the run's leaf before its start. A run
	// with limits that cannot be applied (no Cgroup, or a controller not
	// enabled) does not start: StartFailed, the error says why.
	Limits cgroup.Limits
	// Heartbeat, if set, gives the run a heartbeat pipe as fd
	// HeartbeatFD (fd 3 closed when ExtraFiles has no lock), named in
	// its environment (EnvHeartbeatFD); see heartbeat.go.
	Heartbeat *Heartbeat
	// Warn, if set, is told, before Run returns, what the supervisor's
	// log should say of the run's containment: a process of the run
	// found outside its leaf (a root job can move itself), a leaf that
	// could not be removed. args are slog's key-value pairs.
	Warn func(msg string, args ...any)
}

// Result is what Run reports about a run.
type Result struct {
	PID int
	// ExitCode is the exit status, 128+signal number when the main process
	// was killed by a signal (the shell convention), ExitNotFound or
	// ExitNotExecutable when it failed to start, and -1 when unknown.
	ExitCode int
	// Signal names the signal that ended the main process ("SIGKILL"), or "".
	Signal string
	// Started is when the main process started; Ended is when the run was
	// over: its tree gone and its output drained. Exited is when the
	// main process exited, as its keeper saw it when there is one (the
	// process's own end, even if this process was frozen then), zero
	// if it did not exit by itself.
	Started, Ended, Exited time.Time
	Outcome                Outcome
	// Usage is what the run cost, from its cgroup (Usage.Measured false
	// without one).
	Usage run.Usage
	// Beat is the newest beat the supervisor read of the run's heartbeat
	// (Time zero: none).
	Beat Beat
	// Err is why the start failed, or context.Cause(ctx) for TimedOut and
	// Canceled (so callers can tell "replaced" from "shutdown" with
	// errors.Is), joined with ErrSurvivors when the tree could not be ended.
	Err error
}

// Run starts spec, waits until the main process has exited or ctx is done,
// ends every remaining process of the run and returns once none is left (or
// 5 s after SIGKILL, with ErrSurvivors). It never returns with OnOutput
// still running.
func Run(ctx context.Context, spec Spec) Result {
	res := Result{ExitCode: -1}
	if ctx.Err() != nil {
		res.Outcome, res.Err = ctxOutcome(ctx)
		res.Started, res.Ended = time.Now(), time.Now()
		return res
	}
	r, err := launch(spec, &res)
	if err != nil {
		return startFailed(res, err)
	}
	if r.await(ctx, &res) {
		return res // handed over to its keeper
	}
	r.conclude(spec, &res)
	return res
}

// running is a started run: its process, tree, output and keeper.
type running struct {
	cmd      *exec.Cmd
	tree     *tree
	out      *output
	keeper   *keeper      // nil without one
	leaf     *cgroup.Leaf // the run's cgroup, nil without one
	beats    *beats       // the heartbeat's reader, nil without one
	waited   chan struct{}
	exitSeen time.Time // read once waited is closed
}

// launch starts the run's process (and its keeper) and its exit wait,
// filling res's PID and start.
func launch(spec Spec, res *Result) (*running, error) {
	release := holdStart()
	defer release()
	cmd, err := command(spec)
	if err != nil {
		return nil, err
	}
	r := &running{cmd: cmd, waited: make(chan struct{})}
	if r.tree, err = newTree(spec); err != nil {
		return nil, err
	}
	if r.out, err = newOutput(spec.OnOutput); err != nil {
		return nil, err
	}
	if err := r.out.addBeats(cmd, spec.Heartbeat); err != nil {
		r.out.abort()
		return nil, err
	}
	if r.leaf, err = newLeaf(spec); err != nil {
		r.out.abort()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = r.out.stdoutW, r.out.stderrW
	traced := spec.Setup.traced()
	var setup *setupStart
	if !traced {
		if setup, err = shim(cmd, spec.Setup); err != nil {
			r.abort()
			return nil, err
		}
	}
	if err := r.startKeeper(spec); err != nil {
		setup.abort()
		return nil, err
	}
	if r.leaf != nil {
		r.leaf.SysProcAttr(cmd.SysProcAttr)
	}
	if err := setup.started(cmd, startMain(cmd, spec.Setup, traced)); err != nil {
		r.abort()
		return nil, err
	}
	r.out.closeChildEnds()
	release()
	res.PID, res.Started = cmd.Process.Pid, time.Now()
	r.tree.pgid, r.tree.reaped = res.PID, r.waited
	r.keeper.watch(res.PID, res.Started)
	// OnStart runs before the readers start, so that listeners see the
	// start before the run's first output line (the pipes buffer meanwhile).
	if spec.OnStart != nil {
		spec.OnStart(res.PID)
	}
	r.out.start()
	r.beats = r.out.readBeats(spec.Heartbeat, res.Started)
	go r.reap()
	return r, nil
}

// startMain starts the run's main process with s applied: from a
// thread given its priorities, stopped at its exec (traced), or as the
// shim cmd was turned into.
func startMain(cmd *exec.Cmd, s *Setup, traced bool) error {
	start := func() error { return startRegistered(cmd) }
	switch {
	case s.onThread():
		return startOnThread(s, start)
	case traced:
		return startTraced(cmd, start, func(pid int) error { return applyToProcess(s, pid) })
	}
	return start()
}

// startKeeper starts the run's keeper, if it has one, before the run:
// outside the run's leaf, which it is given the path of.
func (r *running) startKeeper(spec Spec) error {
	k := spec.Keeper
	if k == nil {
		return nil
	}
	var err error
	if r.keeper, err = startKeeper(*k, spec, r.out, r.leafPath()); err != nil {
		r.abort()
		return fmt.Errorf("start the run's keeper: %w", err)
	}
	r.tree.keeper = r.keeper.pid()
	return nil
}

// leafPath is the run's leaf's directory, "" without one.
func (r *running) leafPath() string {
	if r.leaf == nil {
		return ""
	}
	return r.leaf.Path
}

// abort undoes a launch whose run did not start.
func (r *running) abort() {
	r.keeper.stop()
	r.out.abort()
	if r.leaf != nil {
		_ = r.leaf.Remove()
	}
}

// reap waits for the main process and closes waited; Run's conclusion
// waits for it.
func (r *running) reap() {
	awaitExit(r.cmd.Process.Pid)
	r.exitSeen = time.Now()
	_ = r.cmd.Wait() // the exit status is read from cmd.ProcessState in setExit
	unregister(r.cmd.Process.Pid)
	close(r.waited)
}

// await waits for the run's end or its cause (ctx, a lost keeper) and
// says in res which; true when the run was handed over to its keeper.
func (r *running) await(ctx context.Context, res *Result) (detached bool) {
	select {
	case <-r.waited:
		res.Outcome = Exited
	case <-ctx.Done():
		g := r.keeper
		if errors.Is(context.Cause(ctx), ErrDetach) && g != nil && !g.ending && !isClosed(r.waited) {
			r.out.stop()
			res.Beat = r.beats.stop() // before the keeper reads: one reader at a time
			g.detach()
			if r.leaf != nil {
				r.leaf.Close() // the keeper ends it and removes it
			}
			res.Outcome, res.Err = Detached, ErrDetach
			return true
		}
		res.Outcome, res.Err = ctxOutcome(ctx)
	case <-r.keeper.lost():
		res.Outcome, res.Err = Canceled, r.keeper.exitErr()
	case <-r.beats.overdueC():
		res.Outcome, res.Err = TimedOut, ErrNoHeartbeat
	}
	return false
}

// conclude ends what is left of the run's tree, then reads its exit.
func (r *running) conclude(spec Spec, res *Result) {
	if res.Outcome != Exited && endedByItself(res.PID, r.waited) {
		res.Outcome, res.Err = Exited, nil
	}
	if err := r.end(spec, endGrace(spec.KillGrace, res.Err), res); err != nil {
		res.Err = errors.Join(res.Err, err)
	}
	if res.Outcome == Exited && isClosed(r.waited) {
		res.Exited = r.keeper.exitedAt()
		if res.Exited.IsZero() {
			res.Exited = r.exitSeen
		}
	}
	res.Beat = r.beats.stop()
	r.keeper.stop() // the run is over: nothing is left for the keeper to end
	r.out.finish()
	res.Ended = time.Now()
	setExit(res, r.cmd, r.waited)
}

// end ends what is left of the run: through its leaf when it has one,
// or by finding its process tree.
func (r *running) end(spec Spec, grace time.Duration, res *Result) error {
	if r.leaf != nil {
		return concludeLeaf(r.leaf, r.tree, r.waited, grace, res, newWarner(spec))
	}
	return r.tree.end(r.waited, grace)
}
