package service

import (
	"context"
	"slices"
	"strings"

	"cronvisor/internal/config"
	"cronvisor/internal/lock"
)

// ListLocks returns every lock: the lock files the locker knows, plus the
// locks jobs use that have no file yet (free, before their first run),
// sorted by name. Jobs with overlap allow take no lock. Like lock.Locker's
// List, it returns what it could read together with an error naming what
// it could not. The daemon and `cronvisor locks` without one share it.
func ListLocks(ctx context.Context, locker lock.Locker, jobs []config.Job) ([]lock.Status, error) {
	all, err := locker.List(ctx)
	seen := map[string]bool{}
	for _, s := range all {
		seen[s.Name] = true
	}
	p, ok := locker.(lock.PartialLister)
	partial := ok && p.ListIsPartial()
	for _, j := range jobs {
		if !seen[j.Lock] && j.Overlap != config.OverlapAllow {
			seen[j.Lock] = true
			st := lock.Status{Name: j.Lock}
			if partial && err == nil {
				if got, ierr := locker.Inspect(ctx, j.Lock); ierr == nil {
					st = got
				}
			}
			all = append(all, st)
		}
	}
	slices.SortFunc(all, func(a, b lock.Status) int { return strings.Compare(a.Name, b.Name) })
	return all, err
}
