package cli

import (
	"context"
	"errors"
	"io"

	"cronvisor/config"
	"cronvisor/ctl"
	"cronvisor/history"
	"cronvisor/lock"
	"cronvisor/run"
	"cronvisor/service"
	"cronvisor/statedir"
)

// stateDirSource is what the state dir says without a daemon, for a
// console whose daemon went away: the same reads as status, locks and
// history without one. Its locker is made once: the console reads every
// few seconds, and a Redis locker is a connection pool.
type stateDirSource struct {
	cfg    *config.Config
	locker lock.Locker
}

func newStateDirSource(cfg *config.Config) (*stateDirSource, error) {
	locker, err := readLocker(cfg)
	if err != nil {
		return nil, err
	}
	return &stateDirSource{cfg: cfg, locker: locker}, nil
}

// Close releases the lock backend's connections.
func (s *stateDirSource) Close() { closeLocker(s.locker) }

// closeLocker closes a lock backend that holds connections (Redis).
func closeLocker(l lock.Locker) {
	if c, ok := l.(io.Closer); ok {
		_ = c.Close()
	}
}

// Jobs implements ui.StateDir.
func (s *stateDirSource) Jobs(ctx context.Context) ([]ctl.JobStatus, error) {
	return offlineStatuses(ctx, io.Discard, s.cfg, s.locker) // stderr is the console's screen
}

// Locks implements ui.StateDir.
func (s *stateDirSource) Locks(ctx context.Context) ([]ctl.LockStatus, error) {
	all, err := service.ListLocks(ctx, s.locker, s.cfg.Jobs)
	out := make([]ctl.LockStatus, 0, len(all))
	for _, l := range all {
		out = append(out, service.LockStatusOf(l))
	}
	return out, err
}

// History implements ui.StateDir.
func (s *stateDirSource) History(ctx context.Context, q ctl.HistoryQuery) ([]run.Record, error) {
	store, err := history.OpenReadOnly(statedir.Dir(s.cfg.StateDir).History())
	if errors.Is(err, history.ErrNoHistory) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer store.Close()
	return store.Query(ctx, history.Filter{Job: q.Job, Outcomes: q.Outcomes, Since: q.Since, Limit: q.Limit})
}

// Log implements ui.StateDir.
func (s *stateDirSource) Log(_ context.Context, job, runID string) (ctl.RunLog, error) {
	return service.ReadRunLog(s.cfg.StateDir, job, runID)
}
