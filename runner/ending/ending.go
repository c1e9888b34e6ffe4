// Package ending is the one way a fire's end reaches the outside, whoever
// saw it end: the run's own supervisor, a keeper after its supervisor died
// (recorded by the next supervisor's recovery), recovery closing a run whose
// supervisor and keeper both died, a peer closing a lost host's runs, a
// slot whose retries were cut short, and every fire that did not run
// (skipped, missed, dropped while stopping).
//
// Each of them writes the terminal record through a Writer and, only if
// that write is the one that ended the run, tells every observer: the
// job's state and the control socket's stream (service), notifications,
// metrics and the log. The shared history follows the local record (its
// outbox is filled in the record's own transaction). A writer that closed
// nothing (the run was recorded already, by its supervisor, another
// recoverer or another host) tells nobody, so each end is told once.
//
// Nothing else calls a Writer: the tests of this package fail when a
// terminal write is called from anywhere else.
package ending

import (
	"context"
	"time"

	"cronvisor/internal/base/run"
)

// Writer writes a run's terminal record.
type Writer interface {
	// WriteEnd writes e as the end of its run. closed reports that this
	// write ended the run's record: false when the run was recorded
	// ended already. err says the record is not durable yet; with
	// closed true it is kept for a retry, and the run did end.
	WriteEnd(ctx context.Context, e run.End) (closed bool, err error)
}

// SkipWriter writes the record of a fire that did not run.
type SkipWriter interface {
	WriteSkip(run.Skip)
}

// LostCloser is a shared history that closes, in one statement, the runs
// of hosts that stopped beating (*fleet.Store): each run it returns is
// closed by this call alone.
type LostCloser interface {
	CloseLostRuns(ctx context.Context) ([]run.Record, error)
}

// Judge learns from every end the path tells and may judge it: a run
// that ended ok far sooner than the job's runs do returns the run.Fast
// to tell after its end (durations.Learner).
type Judge interface {
	Ended(ctx context.Context, e run.End) (run.Fast, bool)
}

// Path carries ends to the observers. Its zero value tells nobody.
type Path struct {
	emit  func(run.Event)
	judge Judge
}

// Option configures a Path.
type Option func(*Path)

// WithJudge has j learn from every end told, and the fast runs it finds
// told after their ends.
func WithJudge(j Judge) Option { return func(p *Path) { p.judge = j } }

// New returns the path whose observers emit reaches (the daemon's
// fan-out); nil emit: none.
func New(emit func(run.Event), opts ...Option) Path {
	p := Path{emit: emit}
	for _, o := range opts {
		o(&p)
	}
	return p
}

func (p Path) tell(ev run.Event) {
	if p.emit != nil {
		p.emit(ev)
	}
}

// End writes e through w and, if that write ended the run, tells every
// observer. It returns what the write returned.
func (p Path) End(ctx context.Context, w Writer, e run.End) (closed bool, err error) {
	closed, err = w.WriteEnd(ctx, e)
	if !closed {
		return closed, err
	}
	p.tell(e)
	if p.judge != nil {
		if fast, ok := p.judge.Ended(ctx, e); ok {
			p.tell(fast)
		}
	}
	return closed, err
}

// Resumed tells every observer that a slot whose last attempt a stopped
// or dead supervisor recorded now waits here for its next attempt: e is
// that attempt's end restated (Amends and Retrying, RetryAt when the next
// attempt is due). Nothing is written: the attempt's record stands, and
// the slot's end comes with its attempts' own.
func (p Path) Resumed(e run.End) {
	if e.Amends && e.Retrying {
		p.tell(e)
	}
}

// Skip writes the record of a fire that did not run and tells every
// observer.
func (p Path) Skip(w SkipWriter, s run.Skip) {
	w.WriteSkip(s)
	p.tell(s)
}

// CloseLost closes the runs of lost hosts in c and tells every observer
// of each, as a run.HostLost at now. It returns the runs it closed.
func (p Path) CloseLost(ctx context.Context, c LostCloser, now time.Time) ([]run.Record, error) {
	closed, err := c.CloseLostRuns(ctx)
	for _, r := range closed {
		p.tell(run.HostLost{Job: r.Job, RunID: r.RunID, Host: r.Host, Slot: r.ScheduledAt, Started: r.StartedAt,
			Ended: r.EndedAt, Time: now, Reason: r.Reason, Attempt: max(r.Attempt, 1), Manual: r.Manual})
	}
	return closed, err
}
