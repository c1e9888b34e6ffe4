package history

import (
	"context"
	"fmt"
	"strings"

	"cronvisor/internal/base/run"
)

// Overlap is a run and the fires that were skipped because it held the lock.
type Overlap struct {
	// Run is the holding run as recorded. When the holder is not in this
	// store (a foreign flock(1), another state dir, a pruned row) Run is
	// built from the skips' Holder: Job, RunID, Host and PID, no Outcome.
	Run       run.Record
	Synthetic bool         // Run was built from a Holder, not found in the store
	Skips     []run.Record // newest first
}

// overlapChunk bounds the run ids bound to one IN (...) query, well under
// SQLite's limit on bound variables.
const overlapChunk = 500

// Overlaps groups the skips that match f (its Outcomes are ignored) by the
// run that held the lock: the run whose RunID is the skip's Holder.RunID, or
// one synthetic entry per unknown holder (host, pid, run id). Skips without
// a Holder did not collide with a run and are left out. Groups come newest
// skip first.
func (s *Store) Overlaps(ctx context.Context, f Filter) ([]Overlap, error) {
	f.Outcomes = []run.Outcome{run.Skipped}
	q, a := buildQuery(f, "holder_pid IS NOT NULL")
	db, err := s.reader()
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, q, a...)
	if err != nil {
		return nil, fmt.Errorf("history: overlaps: %w", err)
	}
	skips, err := collect(rows)
	if err != nil {
		return nil, err
	}
	runs, err := s.byRunID(ctx, holderRunIDs(skips))
	if err != nil {
		return nil, err
	}
	var out []Overlap
	index := map[holderKey]int{}
	for _, sk := range skips {
		h := *sk.Holder
		held, known := runs[h.RunID]
		k := holderKey{RunID: h.RunID}
		if !known {
			k = holderKey{Host: h.Host, PID: h.PID, RunID: h.RunID}
		}
		i, seen := index[k]
		if !seen {
			i = len(out)
			index[k] = i
			if !known {
				held = run.Record{Job: h.Job, RunID: h.RunID, Host: h.Host, PID: h.PID, StartedAt: h.Since}
			}
			out = append(out, Overlap{Run: held, Synthetic: !known})
		}
		out[i].Skips = append(out[i].Skips, sk)
	}
	return out, nil
}

type holderKey struct {
	Host  string
	PID   int
	RunID string
}

func holderRunIDs(skips []run.Record) []string {
	seen := map[string]bool{}
	var ids []string
	for _, sk := range skips {
		if id := sk.Holder.RunID; id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// byRunID loads the runs with the given ids.
func (s *Store) byRunID(ctx context.Context, ids []string) (map[string]run.Record, error) {
	out := map[string]run.Record{}
	for len(ids) > 0 {
		n := min(len(ids), overlapChunk)
		a := make([]any, n)
		for i, id := range ids[:n] {
			a[i] = id
		}
		ids = ids[n:]
		db, err := s.reader()
		if err != nil {
			return nil, err
		}
		rows, err := db.QueryContext(ctx, "SELECT id, "+columns+
			" FROM runs WHERE run_id IN (?"+strings.Repeat(",?", n-1)+")", a...)
		if err != nil {
			return nil, fmt.Errorf("history: overlaps: %w", err)
		}
		recs, err := collect(rows)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			out[r.RunID] = r
		}
	}
	return out, nil
}
