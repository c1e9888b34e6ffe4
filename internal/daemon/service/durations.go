package service

import (
	"context"
	"time"

	"cronvisor/internal/base/durations"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
)

// LearnedDurations gives the figures learned from jobs' successful runs
// (a durations.Learner's StatsOf): a job without runs may be absent.
type LearnedDurations func(ctx context.Context, jobs []string) (map[string]durations.Stats, error)

// DurationsOf converts a job's learned figures to the wire's, with the
// bounds its warn_after and warn_fast learn and the advice on its
// timeout; nil when it has no successful run.
func DurationsOf(j config.Job, st durations.Stats) *ctl.Durations {
	if st.Runs == 0 {
		return nil
	}
	d := &ctl.Durations{Runs: st.Runs, P5MS: ms(st.P5), P50MS: ms(st.P50), P95MS: ms(st.P95),
		P99MS: ms(st.P99), MaxMS: ms(st.Max), TimeoutAdvice: durations.TimeoutWarning(j.Timeout, st)}
	if b, _, ok := durations.SlowBound(st); ok && j.WarnAfterLearned {
		d.SlowAfterMS = ms(b)
	}
	if b, _, ok := durations.FastBound(st); ok && j.WarnFastLearned {
		d.FastBelowMS = ms(b)
	}
	if t, _, ok := durations.SuggestTimeout(st); ok {
		d.SuggestedTimeoutMS = ms(t)
	}
	d.RecentMS = make([]int64, len(st.Recent))
	for i, r := range st.Recent {
		d.RecentMS[i] = ms(r)
	}
	return d
}

func ms(d time.Duration) int64 { return d.Round(time.Millisecond).Milliseconds() }

// learned reads the learned figures of jobs, nil without Durations. A
// history that cannot be read leaves out the jobs it could not read: the
// rest of the status is still true.
func (b Statuses) learned(ctx context.Context, jobs []config.Job) map[string]durations.Stats {
	if b.Durations == nil {
		return nil
	}
	names := make([]string, len(jobs))
	for i, j := range jobs {
		names[i] = j.Name
	}
	stats, _ := b.Durations(ctx, names) // what it could read, beside an error
	if stats == nil {
		stats = map[string]durations.Stats{}
	}
	return stats
}
