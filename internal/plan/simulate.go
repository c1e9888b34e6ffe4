package plan

import (
	"sort"
	"time"

	"cronvisor/internal/config"
)

// Expect is what the window's fires would come to if every run took the
// measured p95 (bounded by the timeout): a replay of the overlap policy.
type Expect struct {
	TookMS      int64 `json:"took_ms"` // what each run is taken to last
	Runs        int   `json:"runs"`
	Skipped     int   `json:"skipped"`     // skipped for a run still going (overlap skip, or a queue already full)
	Queued      int   `json:"queued"`      // waited for the lock, then ran (overlap queue)
	MaxWaitMS   int64 `json:"max_wait_ms"` // the longest such wait
	Replaced    int   `json:"replaced"`    // runs a newer fire ended (overlap replace)
	Overlapping int   `json:"overlapping"` // runs started beside another (overlap allow)
	MaxAtOnce   int   `json:"max_at_once"`
	TimedOut    int   `json:"timed_out"` // runs the timeout would end
}

// simulate replays fires under j's overlap policy with runs of took.
func simulate(j config.Job, fires []Fire, took time.Duration) *Expect {
	e := &Expect{}
	timedOut := j.Timeout > 0 && took > j.Timeout
	if timedOut {
		took = j.Timeout
	}
	e.TookMS = took.Milliseconds()
	if !j.Enabled {
		return e
	}
	starts := make([]time.Time, 0, len(fires))
	for _, f := range fires {
		if f.Skipped == "" { // a calendar's day: no run
			starts = append(starts, f.Start)
		}
	}
	sort.Slice(starts, func(a, b int) bool { return starts[a].Before(starts[b]) })
	var r replay
	r.took, r.e = took, e
	for _, t := range starts {
		r.fire(j.Overlap, t)
	}
	if timedOut {
		e.TimedOut = e.Runs
	}
	return e
}

// replay is the state of one job's simulated runs.
type replay struct {
	took      time.Duration
	e         *Expect
	busyUntil time.Time   // the end of the run holding the lock
	queuedAt  time.Time   // a fire waiting for it (zero: none)
	ends      []time.Time // overlap allow: every run still going
}

func (r *replay) fire(o config.Overlap, t time.Time) {
	r.drain(t)
	if o == config.OverlapAllow {
		r.allow(t)
		return
	}
	if !t.Before(r.busyUntil) {
		r.start(t)
		return
	}
	switch o {
	case config.OverlapQueue:
		if r.queuedAt.IsZero() {
			r.queuedAt = t
			return
		}
		r.e.Skipped++
	case config.OverlapReplace:
		r.e.Replaced++
		r.start(t)
	default:
		r.e.Skipped++
	}
}

// drain starts the queued fire for every run that ended by t.
func (r *replay) drain(t time.Time) {
	for !r.queuedAt.IsZero() && !r.busyUntil.After(t) {
		at := r.busyUntil
		r.e.Queued++
		r.e.MaxWaitMS = max(r.e.MaxWaitMS, at.Sub(r.queuedAt).Milliseconds())
		r.queuedAt = time.Time{}
		r.start(at)
	}
}

func (r *replay) start(t time.Time) {
	r.e.Runs++
	r.busyUntil = t.Add(r.took)
}

func (r *replay) allow(t time.Time) {
	live := r.ends[:0]
	for _, end := range r.ends {
		if end.After(t) {
			live = append(live, end)
		}
	}
	r.ends = append(live, t.Add(r.took))
	if len(live) > 0 {
		r.e.Overlapping++
	}
	r.e.MaxAtOnce = max(r.e.MaxAtOnce, len(r.ends))
	r.e.Runs++
}
