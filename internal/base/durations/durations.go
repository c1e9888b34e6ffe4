// Package durations learns what a job's runs take from their history: the
// percentiles of its successful runs over a window, and the bounds drawn
// from them (slow, fast, a suggested timeout). The figures are pure
// functions of the samples; Learner keeps each job's window in memory,
// filled once from a Source (the history store) and then by the runs that
// end.
//
// The rules, stated once here and in docs/durations.md:
//   - A sample is a run that ended ok, with its start and end: skips,
//     failures, timeouts and interrupted runs say nothing about how long
//     the job takes.
//   - The window is the newest Window samples no older than keep_age,
//     whichever holds fewer.
//   - Nothing is judged before MinSamples samples are in the window.
//   - Percentiles interpolate linearly between the closest ranks.
package durations

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Window is how many of a job's newest successful runs the figures use.
const Window = 50

// MinSamples is how many successful runs a job needs before any figure is
// judged by: a slow or fast mark, a timeout advice.
const MinSamples = 10

// Sample is one successful run: how long it took and when it ended.
type Sample struct {
	RunID string
	Took  time.Duration
	Ended time.Time
	Host  string // the host that ran it ("" when the source does not say)
}

// Stats are the figures of a window of samples. Runs is 0 when there is
// none; the durations are then zero.
type Stats struct {
	Runs   int           `json:"runs"`
	P5     time.Duration `json:"p5"`
	P50    time.Duration `json:"p50"`
	P95    time.Duration `json:"p95"`
	P99    time.Duration `json:"p99"`
	Max    time.Duration `json:"max"`
	Oldest time.Time     `json:"oldest"` // the oldest sample's end
	// Recent are the newest RecentRuns durations, oldest first: a
	// sparkline's points.
	Recent []time.Duration `json:"recent"`
}

// RecentRuns is how many of the newest durations Stats.Recent holds.
const RecentRuns = 16

// Enough reports whether the figures may be judged by.
func (s Stats) Enough() bool { return s.Runs >= MinSamples }

// Compute returns the figures of samples (in any order).
func Compute(samples []Sample) Stats {
	if len(samples) == 0 {
		return Stats{}
	}
	byEnd := slices.Clone(samples)
	slices.SortStableFunc(byEnd, func(a, b Sample) int { return b.Ended.Compare(a.Ended) }) // newest first
	took := make([]time.Duration, len(byEnd))
	for i, s := range byEnd {
		took[i] = s.Took
	}
	recent := recentOf(took)
	slices.Sort(took)
	st := statsOfSorted(took, byEnd[len(byEnd)-1].Ended)
	st.Recent = recent
	return st
}

// recentOf is Stats.Recent of durations newest first.
func recentOf(newestFirst []time.Duration) []time.Duration {
	recent := slices.Clone(newestFirst[:min(len(newestFirst), RecentRuns)])
	slices.Reverse(recent)
	return recent
}

// statsOfSorted are the figures of sorted durations, not empty.
func statsOfSorted(took []time.Duration, oldest time.Time) Stats {
	return Stats{Runs: len(took), P5: quantile(took, 0.05), P50: quantile(took, 0.50),
		P95: quantile(took, 0.95), P99: quantile(took, 0.99), Max: took[len(took)-1], Oldest: oldest}
}

// quantile is the q-quantile of sorted by linear interpolation between
// the closest ranks (numpy's and R's default, type 7).
func quantile(sorted []time.Duration, q float64) time.Duration {
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	frac := pos - float64(lo)
	return sorted[lo] + time.Duration(frac*float64(sorted[hi]-sorted[lo]))
}

// Windowed returns the samples the window holds at now: the newest Window
// ones (samples are newest first) that ended after now-keepAge (keepAge
// 0: no age limit).
func Windowed(samples []Sample, now time.Time, keepAge time.Duration) []Sample {
	samples = samples[:min(len(samples), Window)]
	if keepAge <= 0 {
		return samples
	}
	cutoff := now.Add(-keepAge)
	for i, s := range samples {
		if !s.Ended.After(cutoff) {
			return samples[:i]
		}
	}
	return samples
}

// The slow bound: twice the p99, and at least SlowMargin above it, so that
// a job of a second is not slow at two.
const (
	SlowFactor = 2
	SlowMargin = 10 * time.Second
)

// SlowBound is how long a run may go before it is slow, learned from s,
// and the words that say where the bound came from; ok is false when s
// has too few runs to judge.
func SlowBound(s Stats) (bound time.Duration, basis string, ok bool) {
	if !s.Enough() {
		return 0, "", false
	}
	bound = max(SlowFactor*s.P99, s.P99+SlowMargin)
	return bound, fmt.Sprintf("p99 of the last %d runs is %s", s.Runs, Round(s.P99)), true
}

// FastDivisor: a run is fast when it ends ok in under a quarter of the p5.
const FastDivisor = 4

// FastBound is the duration below which an ok run is fast, learned from
// s; ok is false when s has too few runs to judge.
func FastBound(s Stats) (bound time.Duration, basis string, ok bool) {
	if !s.Enough() {
		return 0, "", false
	}
	return s.P5 / FastDivisor, fmt.Sprintf("p5 of the last %d runs is %s", s.Runs, Round(s.P5)), true
}

// Round shortens d for a person: milliseconds below a second, tenths of
// a second below a minute, whole seconds above.
func Round(d time.Duration) time.Duration {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond)
	case d < time.Minute:
		return d.Round(100 * time.Millisecond)
	default:
		return d.Round(time.Second)
	}
}
