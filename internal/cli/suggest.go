package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"cronvisor/internal/base/durations"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/store/history"
)

func newSuggest(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "suggest",
		Short: "Values for jobs.yaml drawn from the jobs' history",
		Args:  noArgs,
	}
	c.AddCommand(&cobra.Command{
		Use:   "timeout JOB",
		Short: "A timeout for JOB from what its successful runs took, with its reason",
		Long: `A timeout for JOB from its newest successful runs in this host's history (at
most 50, within keep_age): three times their p99, at least a minute above
it, rounded up. It prints a line to paste into jobs.yaml and the reason;
nothing changes the file. Exit 1 when the job has fewer than 10 successful
runs to judge by.`,
		Example: `  cronvisor suggest timeout sync_orders`,
		Args:    argsExactly(1, "one JOB"),
		RunE:    func(cmd *cobra.Command, args []string) error { return suggestTimeout(g, args[0]) },
	})
	return c
}

func suggestTimeout(g *globals, name string) error {
	cfg, _, err := readConfig(g)
	if err != nil {
		return err
	}
	job, ok := findJob(cfg, name)
	if !ok {
		return noJob(g, cfg, name)
	}
	st, err := storedStats(cfg, []string{name})
	if err != nil {
		return exitCode(1, err)
	}
	s := st[name]
	timeout, reason, ok := durations.SuggestTimeout(s)
	if !ok {
		return exitCode(1, fmt.Errorf("no timeout to suggest for %s: %s", name, reason))
	}
	fmt.Fprintf(g.stdout, "timeout: %s\n", timeout)
	fmt.Fprintf(g.stdout, "# %s\n", reason)
	if w := durations.TimeoutWarning(job.Timeout, s); w != "" {
		fmt.Fprintf(g.stdout, "# %s\n", w)
	}
	return nil
}

// storedStats are the learned figures of jobs from this host's store,
// none when it has no history yet.
func storedStats(cfg *config.Config, jobs []string) (map[string]durations.Stats, error) {
	store, err := history.OpenReadOnly(statedir.Dir(cfg.StateDir).History())
	if errors.Is(err, history.ErrNoHistory) {
		return map[string]durations.Stats{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer store.Close()
	return newLearner(store, cfg).StatsOf(context.Background(), jobs)
}

// timeoutWarnings are validate's warnings on the jobs whose timeout their
// recorded runs contradict (below their p99, or far above it), at the
// timeout's position; none without a history.
func timeoutWarnings(cfg *config.Config) []config.Problem {
	names := make([]string, len(cfg.Jobs))
	for i, j := range cfg.Jobs {
		names[i] = j.Name
	}
	stats, err := storedStats(cfg, names)
	if err != nil {
		return []config.Problem{{Path: cfg.Path, Warning: true,
			Message: "the jobs' timeouts were not checked against their history: " + err.Error()}}
	}
	var ps []config.Problem
	for i, j := range cfg.Jobs {
		if w := durations.TimeoutWarning(j.Timeout, stats[j.Name]); w != "" {
			at := cfg.JobSource(i).At("timeout")
			ps = append(ps, config.Problem{Path: cfg.Path, Line: at.Line, Col: at.Col, Warning: true,
				Message: j.Name + ": " + w})
		}
	}
	return ps
}
