package cli

import (
	"context"
	"encoding/json"
	"errors"

	"cronvisor/config"
	"cronvisor/ctl"
	"cronvisor/history"
	"cronvisor/service"
)

// stateDirSource is what the state dir says without a daemon, for a
// console whose daemon went away: the same reads as status, locks and
// history without one.
type stateDirSource struct{ cfg *config.Config }

// Jobs implements ui.StateDir.
func (s stateDirSource) Jobs(ctx context.Context) ([]ctl.JobStatus, error) {
	return offlineStatuses(ctx, s.cfg)
}

// Locks implements ui.StateDir.
func (s stateDirSource) Locks(ctx context.Context) ([]ctl.LockStatus, error) {
	locker, err := newLocker(s.cfg)
	if err != nil {
		return nil, err
	}
	all, err := service.ListLocks(ctx, locker, s.cfg.Jobs)
	out := make([]ctl.LockStatus, 0, len(all))
	for _, l := range all {
		out = append(out, ctl.LockStatusOf(l))
	}
	return out, err
}

// History implements ui.StateDir.
func (s stateDirSource) History(ctx context.Context, q ctl.HistoryQuery) ([]json.RawMessage, error) {
	store, err := history.OpenReadOnly(historyPath(s.cfg))
	if errors.Is(err, history.ErrNoHistory) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer store.Close()
	recs, err := store.Query(ctx, history.Filter{Job: q.Job, Outcomes: q.Outcomes, Since: q.Since, Limit: q.Limit})
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, 0, len(recs))
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}
