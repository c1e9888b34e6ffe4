package ui

import (
	"slices"
	"strconv"
	"time"

	"cronvisor/internal/base/run"
)

// recKey is a record's identity: its run id, its attempt and whether it is
// a skip or a run. The live stream and the store's pages describe the same
// record with different fields filled in (an event has no log path, a
// stored skip no end), so the console matches them by this key and never
// by position or by the whole value.
func recKey(r run.Record) string {
	kind := "run"
	if r.Outcome == run.Skipped {
		kind = "skip"
	}
	return r.RunID + "#" + strconv.Itoa(max(r.Attempt, 1)) + "#" + kind
}

// sortTime orders records as the store does (history's "at" column): the
// slot, else the start, else the end.
func sortTime(r run.Record) time.Time {
	for _, t := range []time.Time{r.ScheduledAt, r.StartedAt, r.EndedAt} {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// mergeRecords is a fetched page (newest first) with the live records it
// does not have yet: those the stream delivered after the store was read,
// or before the store had written them. A live record older than the
// page's oldest is dropped: the page covers that span and left it out
// (pruned). The page's version of a record wins; it has the log path.
func mergeRecords(page, live []run.Record) []run.Record {
	if len(live) == 0 {
		return page
	}
	seen := make(map[string]bool, len(page))
	for _, r := range page {
		seen[recKey(r)] = true
	}
	var oldest time.Time
	if len(page) > 0 {
		oldest = sortTime(page[len(page)-1])
	}
	out := slices.Clone(page)
	added := false
	for _, r := range live {
		k := recKey(r)
		if seen[k] || sortTime(r).Before(oldest) {
			continue
		}
		seen[k] = true
		out = append(out, r)
		added = true
	}
	if added {
		slices.SortStableFunc(out, func(a, b run.Record) int { return sortTime(b).Compare(sortTime(a)) })
	}
	return out
}
