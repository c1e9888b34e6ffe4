package daemon

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/config"
	"cronvisor/internal/daemon/recovery"
	"cronvisor/internal/proc/cgroup"
	"cronvisor/internal/store/history"
	"cronvisor/runner/ending"
)

// newRecovery returns the recoverer of dead supervisors' runs, judging
// this process by its pid, its start and its runs in flight (mine).
func (e *Env) newRecovery(store *history.Store, mine func(runID string) bool, started time.Time, hier *cgroup.Hierarchy, log *slog.Logger) *recovery.Recoverer {
	lookup := e.jobLookup()
	return recovery.New(recovery.Config{
		Store: store, Locker: e.Locker, Alive: recovery.Supervisors(),
		Self: os.Getpid(), Started: started, Mine: mine,
		LockOf: func(name string) string {
			if j, ok := lookup(name); ok {
				return j.Lock
			}
			return name
		},
		KillGrace: func(name string) time.Duration {
			if j, ok := lookup(name); ok {
				return j.KillGrace
			}
			return 10 * time.Second // a job gone since
		},
		StateDir: e.cfg.Load().StateDir,
		Cgroup:   hier,
		KeepAge:  func() time.Duration { return e.cfg.Load().History.KeepAge },
		Log:      log,
		Path:     ending.New(e.Emit, ending.WithJudge(e.Learner)),
		SlotsOf:  e.Resources.SlotsOf,
		Resume: func(ctx context.Context, r recovery.Resumption) error {
			return e.resumeRetries(ctx, lookup, r)
		},
	})
}

// resumeRetries runs the remaining attempts of a slot that a stopped or
// dead supervisor left waiting for a retry, with the job as the current
// config has it (lookup; see runner.Supervisor.ResumeRetries).
func (e *Env) resumeRetries(ctx context.Context, lookup func(string) (config.Job, bool), r recovery.Resumption) error {
	j, ok := lookup(r.Job)
	switch {
	case !ok:
		return errors.New("the job is no longer in " + e.cfg.Load().Path)
	case !j.Enabled:
		return errors.New("the job is disabled")
	}
	return e.Supervisor.ResumeRetries(ctx, j, r.Slot, r.Attempt, r.At, r.Manual)
}

// RecoverRuns records the runs that dead supervisors left behind: those
// whose processes are gone now, the others as soon as they are (see
// package recovery).
func (e *Env) RecoverRuns(ctx context.Context) error {
	if e.Recovery == nil {
		return nil
	}
	_, err := e.Recovery.Sweep(ctx)
	if errors.Is(err, history.ErrUnavailable) {
		return nil // history is degraded, and that is logged once already
	}
	return err
}

// recoverEvery is how often a daemon sweeps the lock records and history
// for dead supervisors' runs that no fire came across (a run that a fire
// finds, or that a sweep finds still holding its lock, is recorded as soon
// as its processes let go: see package recovery); pruneEvery how often it
// applies the history retention (a scan of the runs table: not per minute).
// The first prune waits firstPrune: it scans the whole runs table, and a
// daemon that has just started, or is restarted in a loop, should stay
// cheap.
const (
	recoverEvery = time.Minute
	pruneEvery   = time.Hour
	firstPrune   = 10 * time.Minute
)

// sharedPruner is the fleet's shared history as housekeeping prunes it.
type sharedPruner interface {
	Prune(ctx context.Context, before time.Time) (int64, error)
}

// housekeep recovers orphaned runs, at once and then every recoverEvery,
// and prunes history off the scheduler's goroutine, so that neither ever
// delays a fire: this host's store, and the shared one (nil without a
// fleet) by keep_age. It returns when ctx is done.
func (e *Env) housekeep(ctx context.Context, c clock.Clock, current func() *config.Config, shared sharedPruner) {
	if e.Store == nil {
		return
	}
	t := c.NewTimer(recoverEvery)
	defer t.Stop()
	nextPrune := c.Now().Add(firstPrune)
	for {
		cfg := current()
		if err := e.RecoverRuns(ctx); err != nil && ctx.Err() == nil {
			e.log.Error("recording runs of dead supervisors", "err", err)
		}
		if now := c.Now(); !now.Before(nextPrune) {
			nextPrune = now.Add(pruneEvery)
			e.prune(ctx, cfg, now, shared)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			t.Reset(recoverEvery)
		}
	}
}

// prune prunes this host's store by keep_runs and keep_age, and the
// shared history by keep_age: every host does it, and a row one host
// deleted is nothing for the next.
func (e *Env) prune(ctx context.Context, cfg *config.Config, now time.Time, shared sharedPruner) {
	n, err := e.Store.Prune(ctx, cfg.History.KeepRuns, cfg.History.KeepAge, now)
	if err != nil {
		e.log.Error("pruning history", "err", err)
	} else if n > 0 {
		e.log.Info("pruned history", "rows", n)
	}
	if shared == nil || cfg.History.KeepAge <= 0 {
		return
	}
	if n, err := shared.Prune(ctx, now.Add(-cfg.History.KeepAge)); err != nil {
		e.log.Warn("pruning the shared history", "err", err)
	} else if n > 0 {
		e.log.Info("pruned the shared history", "rows", n)
	}
}
