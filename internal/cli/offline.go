package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/daemon/service"
	"cronvisor/internal/lock"
	"cronvisor/internal/store/history"
)

// stateDirSource is what the state dir says without a daemon, for a
// console whose daemon went away: the same reads as status, locks and
// history without one. Its locker is made once: the console reads every
// few seconds, and a Redis locker is a connection pool. The jobs come
// from jobs.yaml read when asked, not kept from the start: a console
// attached to a live daemon never needs them, and 10,000 parsed jobs are
// most of what it would hold.
type stateDirSource struct {
	path     string // jobs.yaml
	stateDir string
	locker   lock.Locker
	mu       sync.Mutex
	cfg      *config.Config // the file as last read, for its size and mtime
	seen     os.FileInfo
}

func newStateDirSource(path string, cfg *config.Config) (*stateDirSource, error) {
	locker, err := readLocker(cfg)
	if err != nil {
		return nil, err
	}
	return &stateDirSource{path: path, stateDir: cfg.StateDir, locker: locker}, nil
}

// config is jobs.yaml, read again only when it changed since the last
// call: the console asks every few seconds while its daemon is away.
func (s *stateDirSource) config() (*config.Config, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fi, err := os.Stat(s.path)
	if err != nil {
		return nil, err
	}
	if s.cfg != nil && s.seen != nil && fi.Size() == s.seen.Size() && fi.ModTime().Equal(s.seen.ModTime()) {
		return s.cfg, nil
	}
	cfg, _ := config.LoadForReading(s.path)
	if cfg == nil {
		return nil, fmt.Errorf("%s cannot be read", s.path)
	}
	s.cfg, s.seen = cfg, fi
	return cfg, nil
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
	cfg, err := s.config()
	if err != nil {
		return nil, err
	}
	return offlineStatuses(ctx, io.Discard, cfg, s.locker, true) // stderr is the console's screen
}

// Locks implements ui.StateDir.
func (s *stateDirSource) Locks(ctx context.Context) ([]ctl.LockStatus, error) {
	cfg, err := s.config()
	if err != nil {
		return nil, err
	}
	all, err := service.ListLocks(ctx, s.locker, cfg.Jobs)
	out := make([]ctl.LockStatus, 0, len(all))
	for _, l := range all {
		out = append(out, service.LockStatusOf(l))
	}
	return out, err
}

// History implements ui.StateDir.
func (s *stateDirSource) History(ctx context.Context, q ctl.HistoryQuery) ([]run.Record, error) {
	store, err := history.OpenReadOnly(statedir.Dir(s.stateDir).History())
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
	return service.ReadRunLog(s.stateDir, job, runID)
}
