package runner

// The last-ok memo keeps each job's last-ok slot, the value of
// CRONVISOR_LAST_OK_SLOT, as the latest run of the job under this
// supervisor left it, so that a fire need not ask the history store for
// it when the fire's lock proves the memo current.
//
// The argument: every run of a job with a lock takes the lock and
// rewrites its record, and a backend that reads the record when it grants
// the lock (lock.Grant.Preceded, the file backend) shows who held it
// last. When that previous holder is the very run the memo was written
// by, a run of this supervisor on this host, nobody can have run the job
// since. Runs without a lock (overlap: allow) forget the memo; another
// config on the same state_dir that runs the job without a lock is not
// seen.

import (
	"context"
	"sync"
	"time"

	"cronvisor/internal/lock"
)

// LastOKFunc returns the slot of a job's last successful run (zero if none),
// from the history store.
type LastOKFunc func(ctx context.Context, job string) (time.Time, error)

// lastOKMemo is the per-job memo. It is safe for concurrent use.
type lastOKMemo struct {
	source LastOKFunc // nil: no store, nothing is known
	host   string
	pid    int

	mu   sync.Mutex
	jobs map[string]lastOKEntry
}

// lastOKEntry is what a job's latest run here left: its own slot if it ended
// ok, else the one it started with, and that run's id.
type lastOKEntry struct {
	runID string
	slot  time.Time
}

// newLastOKMemo returns a memo that asks source when it cannot vouch for itself.
// host and pid are this supervisor's, as it writes them in lock records.
func newLastOKMemo(source LastOKFunc, host string, pid int) *lastOKMemo {
	return &lastOKMemo{source: source, host: host, pid: pid, jobs: map[string]lastOKEntry{}}
}

// Lookup returns job's last-ok slot for a run about to start under g (the
// zero Grant for a run without a lock), and whether it is known: from the
// memo when g's previous holder is the memo's run, else from the source.
func (m *lastOKMemo) Lookup(ctx context.Context, job string, g lock.Grant) (time.Time, bool) {
	if m.source == nil {
		return time.Time{}, false
	}
	if prev := g.Previous; g.Preceded && prev != nil && prev.SupervisorPID == m.pid && prev.Host == m.host && prev.RunID != "" {
		m.mu.Lock()
		e, ok := m.jobs[job]
		m.mu.Unlock()
		if ok && e.runID == prev.RunID {
			return e.slot, true
		}
	}
	t, err := m.source(ctx, job)
	return t, err == nil
}

// Remember records slot as what run runID of job leaves as its last-ok
// slot, or forgets the job when the slot is not known or g is a grant
// that could not vouch for the memo at the next fire. Call it before the
// lock's release, so that the next holder finds the memo written.
func (m *lastOKMemo) Remember(job, runID string, slot time.Time, known bool, g lock.Grant) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if known && g.Preceded {
		m.jobs[job] = lastOKEntry{runID: runID, slot: slot}
	} else {
		delete(m.jobs, job)
	}
}
