package daemon

import (
	"errors"
	"log/slog"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/store/history"
)

// openHistory opens the history store at path with open. A file there
// that is not a database is moved aside (history.db.corrupt-TIMESTAMP)
// and a new one started: what an operator wants at 3 a.m. is jobs
// recorded again, with the old file kept for a post-mortem. A store that
// cannot be opened at all (a read-only or full state dir) is returned
// unopened with the error; its first write that succeeds opens it. Every
// connection it opens, then or later, syncs as d says.
func openHistory(path string, open func(string, ...history.StoreOption) (*history.Store, error), d run.Durability, log *slog.Logger) (*history.Store, error) {
	reopened := history.WithReopened(func(path, setAside string) {
		if setAside != "" {
			log.Warn("history: the database file was replaced by one that is no database; moved it aside and started a new one", "path", path, "moved_to", setAside)
			return
		}
		log.Warn("history: the database file was deleted or replaced; writing to the one now at its path", "path", path)
	})
	restored := history.WithRestored(func(path, kept string, err error) {
		switch {
		case err == nil:
			log.Warn("history: the database file was deleted; its records are back at its path", "path", path)
		case kept != "":
			log.Error("history: the database file was deleted and another put at its path; writing to that one, the deleted one's records are kept beside it", "path", path, "kept", kept, "err", err)
		default:
			log.Error("history: the database file was deleted and cannot be put back yet; records wait in memory", "path", path, "err", err)
		}
	})
	durable := history.WithDurability(d)
	store, err := open(path, reopened, restored, durable)
	if errors.Is(err, history.ErrNotDatabase) {
		to, aerr := history.SetAside(path, time.Now())
		if aerr != nil {
			log.Error("history: the database is unusable and cannot be moved aside", "path", path, "err", err, "move_err", aerr)
		} else {
			log.Warn("history: the database was unusable; moved it aside and started a new one", "path", path, "moved_to", to, "err", err)
			store, err = open(path, reopened, restored, durable)
		}
	}
	if err == nil {
		return store, nil
	}
	log.Error("history degraded: cannot open the database; jobs keep running and their records wait in memory", "path", path, "err", err)
	store, uerr := history.Unopened(path, reopened, restored, durable)
	if uerr != nil {
		return nil, uerr
	}
	return store, err
}
