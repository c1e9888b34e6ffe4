package durations

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Source reads the successful runs of jobs from a history, newest first:
// at most limit a job, each ended after since. Jobs without any are
// absent from the map.
type Source interface {
	OKSamples(ctx context.Context, jobs []string, since time.Time, limit int) (map[string][]Sample, error)
}

// FastRule is when a job's ok run is fast: never (the zero value), below
// the learned bound (Learned), or below a fixed duration (Below).
type FastRule struct {
	Learned bool
	Below   time.Duration
}

// On reports whether the rule marks any run fast.
func (r FastRule) On() bool { return r.Learned || r.Below > 0 }

// Learner keeps each job's window of successful runs: read from its
// Source the first time the job's figures are asked for, then kept up to
// date by the ends it is told of (Ended), so that no end costs a read of
// the store. It is safe for concurrent use.
type Learner struct {
	cfg LearnerConfig

	mu   sync.Mutex
	jobs map[string]*window
}

// LearnerConfig is what a Learner reads. Only Now is required.
type LearnerConfig struct {
	Source  Source                    // nil: it learns only from the ends it is told of
	Now     func() time.Time          // its clock
	KeepAge func() time.Duration      // the age past which a run leaves the window; nil or 0: none
	Fast    func(job string) FastRule // each job's warn_fast, as the current config has it; nil: off
}

// NewLearner returns a learner of cfg.
func NewLearner(cfg LearnerConfig) *Learner {
	return &Learner{cfg: cfg, jobs: map[string]*window{}}
}

func (l *Learner) keepAge() time.Duration {
	if l.cfg.KeepAge == nil {
		return 0
	}
	return l.cfg.KeepAge()
}

func (l *Learner) fastRule(job string) FastRule {
	if l.cfg.Fast == nil {
		return FastRule{}
	}
	return l.cfg.Fast(job)
}

// window is one job's runs, newest first, at most Window of them, in
// 16 bytes each: a daemon of 10,000 jobs keeps half a million. loaded is
// false while the source is being read; the ends told meanwhile wait in
// pending, to be merged with what the read found.
type window struct {
	runs    []sample
	loaded  bool
	pending []Sample
}

// sample is a Sample as a window keeps it: Unix nanoseconds.
type sample struct{ took, ended int64 }

// stats are the figures of w's runs that ended after cutoff (Unix
// nanoseconds), as Compute gives them, sorted in buf.
func (w *window) stats(cutoff int64, buf []time.Duration) Stats {
	buf = buf[:0]
	oldest := int64(0)
	for _, s := range w.runs { // newest first
		if s.ended <= cutoff {
			break
		}
		buf = append(buf, time.Duration(s.took))
		oldest = s.ended
	}
	if len(buf) == 0 {
		return Stats{}
	}
	recent := recentOf(buf)
	slices.Sort(buf)
	st := statsOfSorted(buf, time.Unix(0, oldest))
	st.Recent = recent
	return st
}

// push puts s, the newest run, in front of w.
func (w *window) push(s Sample) {
	if len(w.runs) < Window {
		w.runs = append(w.runs, sample{})
	}
	copy(w.runs[1:], w.runs[:len(w.runs)-1])
	w.runs[0] = sample{took: int64(s.Took), ended: s.Ended.UnixNano()}
}

// Stats returns job's figures now, reading its history the first time.
func (l *Learner) Stats(ctx context.Context, job string) (Stats, error) {
	all, err := l.StatsOf(ctx, []string{job})
	return all[job], err
}

// StatsOf returns the figures of jobs, reading in one call the histories
// of those not read yet. A job without successful runs has zero Stats.
func (l *Learner) StatsOf(ctx context.Context, jobs []string) (map[string]Stats, error) {
	err := l.load(ctx, jobs)
	now := l.cfg.Now()
	out := make(map[string]Stats, len(jobs))
	l.mu.Lock()
	defer l.mu.Unlock()
	var cutoff int64 // runs that ended at or before it are out of the window
	if keepAge := l.keepAge(); keepAge > 0 {
		cutoff = now.Add(-keepAge).UnixNano()
	}
	took := make([]time.Duration, 0, Window)
	for _, j := range jobs {
		if w := l.jobs[j]; w != nil && w.loaded {
			out[j] = w.stats(cutoff, took)
		}
	}
	return out, err
}

// Warm reads the histories of the jobs not read yet, so that a later
// call finds them in memory.
func (l *Learner) Warm(ctx context.Context, jobs ...string) error { return l.load(ctx, jobs) }

// load reads the histories of the jobs not loaded yet. A job whose read
// fails is read again next time.
func (l *Learner) load(ctx context.Context, jobs []string) error {
	l.mu.Lock()
	var missing []string
	for _, j := range jobs {
		w := l.jobs[j]
		if w == nil {
			w = &window{}
			l.jobs[j] = w
		}
		if !w.loaded {
			missing = append(missing, j)
		}
	}
	l.mu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	var found map[string][]Sample
	if l.cfg.Source != nil {
		var since time.Time
		if keepAge := l.keepAge(); keepAge > 0 {
			since = l.cfg.Now().Add(-keepAge)
		}
		var err error
		if found, err = l.cfg.Source.OKSamples(ctx, missing, since, Window); err != nil {
			return fmt.Errorf("durations: %w", err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, j := range missing {
		w := l.jobs[j]
		if w == nil || w.loaded { // another caller read it meanwhile
			continue
		}
		read := found[j]
		seen := make(map[string]bool, len(read))
		for _, s := range slices.Backward(read) { // oldest first: each push goes in front
			w.push(s)
			seen[s.RunID] = true
		}
		for _, s := range w.pending { // told while the read ran: it may have found them
			if !seen[s.RunID] {
				w.push(s)
			}
		}
		if len(w.runs) == 0 && l.cfg.Source != nil {
			// Nothing to keep: the job is read again when asked (one index
			// seek), and a million jobs without runs cost no memory.
			delete(l.jobs, j)
			continue
		}
		w.pending, w.loaded = nil, true
	}
	return nil
}
