package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"cronvisor/config"
	"cronvisor/lock"
	"cronvisor/proc"
	"cronvisor/runner"
)

// env is what running jobs needs: the lock backend, the event fan-out and
// the supervisor, wired from one config.
type env struct {
	*runner.Fanout
	Supervisor *runner.Supervisor
	Locker     lock.Locker
	closers    []func() error
	schedOpts  []runner.SchedulerOption
}

func (e *env) Close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		_ = e.closers[i]()
	}
}

// newLocker returns the configured lock backend.
func newLocker(cfg *config.Config) (lock.Locker, error) {
	switch cfg.LockBackend.Type {
	case "", "file":
		return lock.NewFileLocker(filepath.Join(cfg.StateDir, "locks")), nil
	case "redis":
		return nil, fmt.Errorf("%s:%d:%d: lock_backend type redis is not built yet in this version of cronvisor",
			cfg.Path, cfg.LockBackend.Line, cfg.LockBackend.Col)
	}
	return nil, fmt.Errorf("unknown lock backend %q", cfg.LockBackend.Type)
}

// openEnv prepares a supervisor for cfg. Orphans of runs are reparented to
// this process (subreaper) so that no descendant escapes its run's deadline.
func openEnv(cfg *config.Config, stderr io.Writer) (*env, error) {
	if err := proc.EnableSubreaper(); err != nil {
		fmt.Fprintln(stderr, "cronvisor: warning: cannot become a child subreaper:", err)
	}
	locker, err := newLocker(cfg)
	if err != nil {
		return nil, err
	}
	reapCtx, stopReaper := context.WithCancel(context.Background())
	proc.StartReaper(reapCtx)
	e := &env{Fanout: &runner.Fanout{}, Locker: locker}
	e.closers = append(e.closers, func() error { stopReaper(); return nil })
	e.Supervisor = runner.NewSupervisor(locker, e.Emit)
	return e, nil
}

// schedulerOptions wires the history store into the scheduler (catch_up).
func (e *env) schedulerOptions() []runner.SchedulerOption { return e.schedOpts }
