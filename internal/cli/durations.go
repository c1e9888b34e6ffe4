package cli

import (
	"fmt"
	"time"

	"cronvisor/internal/base/durations"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
)

// newLearner learns from src the durations of cfg's jobs, as the daemon
// does from its store (see package durations).
func newLearner(src durations.Source, cfg *config.Config) *durations.Learner {
	return durations.NewLearner(durations.LearnerConfig{Source: src, Now: time.Now,
		KeepAge: func() time.Duration { return cfg.History.KeepAge }})
}

// printDurations prints below a status table, for each job that has
// them, what its successful runs took and what that says of its timeout.
func printDurations(g *globals, jobs []ctl.JobStatus) {
	for _, j := range jobs {
		d := j.Durations
		if d == nil {
			continue
		}
		fmt.Fprintf(g.stdout, "%s: %s\n", j.Name, durationsLine(d))
		if d.TimeoutAdvice != "" {
			fmt.Fprintf(g.stdout, "%s: %s\n", j.Name, d.TimeoutAdvice)
		}
	}
}

// durationsLine says a job's learned figures in one line.
func durationsLine(d *ctl.Durations) string {
	noun := "runs"
	if d.Runs == 1 {
		noun = "run"
	}
	line := fmt.Sprintf("%d ok %s: p50 %s, p95 %s, p99 %s, max %s", d.Runs, noun,
		msText(d.P50MS), msText(d.P95MS), msText(d.P99MS), msText(d.MaxMS))
	if d.Runs < durations.MinSamples {
		return line + fmt.Sprintf(" (nothing judged before %d)", durations.MinSamples)
	}
	if d.SlowAfterMS > 0 {
		line += "; slow after " + msText(d.SlowAfterMS)
	}
	if d.FastBelowMS > 0 {
		line += "; fast below " + msText(d.FastBelowMS)
	}
	return line
}

// msText is a figure in milliseconds as a person reads it.
func msText(ms int64) string { return durations.Round(time.Duration(ms) * time.Millisecond).String() }
