package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"cronvisor/internal/base/schedule"
	"cronvisor/internal/config"
	"cronvisor/internal/plan"
)

// windowFlags are plan's and diff's window: from when, for how long.
type windowFlags struct {
	window, from string
	asJSON       bool
}

func (w *windowFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&w.window, "window", "24h", "how far ahead to look (90m, 24h, 7d)")
	c.Flags().StringVar(&w.from, "from", "", "look from this RFC 3339 time instead of now")
	c.Flags().BoolVar(&w.asJSON, "json", false, "print JSON")
}

// options reads the flags into plan's options (without the figures).
func (w *windowFlags) options() (plan.Options, error) {
	o := plan.Options{From: time.Now()}
	d, err := schedule.ParseDuration(w.window)
	if err != nil || d <= 0 {
		return o, usageError("--window %q is not a positive duration (90m, 24h, 7d)", w.window)
	}
	o.Window = d
	if w.from != "" {
		if o.From, err = time.Parse(time.RFC3339Nano, w.from); err != nil {
			return o, usageError("--from %q is not an RFC 3339 time (e.g. 2027-03-27T12:00:00+01:00)", w.from)
		}
	}
	return o, nil
}

func newPlan(g *globals) *cobra.Command {
	var w windowFlags
	c := &cobra.Command{
		Use:   "plan [JOB...]",
		Short: "What jobs.yaml will do over the next day: fires, DST edges, and the skips its runs' durations predict",
		Long: `Print, for every job of jobs.yaml (or those named), its fires over the window
(24h from now unless --window and --from say otherwise): how many, the first,
the shortest period, the DST changes they cross and what each does to them,
jitter and H draws included. Where this host's history has at least 10
successful runs of a job, it replays the window with runs that last their
p95 (bounded by the timeout) under the job's overlap policy, and says what
to expect: runs, skips, queue waits, overlaps. It calls out what contradicts
itself: a timeout below the p95, a queue that cannot drain, a catch_up longer
than the period. Nothing runs and nothing changes. --config reads any file.`,
		Example: `  cronvisor plan
  cronvisor plan sync_orders --window 7d
  cronvisor plan --from 2027-03-27T12:00:00+01:00 --json`,
		RunE: func(cmd *cobra.Command, args []string) error { return runPlan(g, w, args) },
	}
	w.add(c)
	return c
}

func runPlan(g *globals, w windowFlags, names []string) error {
	o, err := w.options()
	if err != nil {
		return err
	}
	cfg, err := loadConfig(g)
	if err != nil {
		return err
	}
	jobs, err := jobsByName(g, cfg, names)
	if err != nil {
		return err
	}
	if o.Stats, err = storedStats(cfg, jobNames(&config.Config{Jobs: jobs})); err != nil {
		fmt.Fprintf(g.stderr, "cronvisor: the history was not read; nothing is predicted from durations: %v\n", err)
	}
	plans := plan.Plan(jobs, o)
	if w.asJSON {
		return writeJSON(g.stdout, struct {
			Config string         `json:"config"`
			From   time.Time      `json:"from"`
			Window int64          `json:"window_s"`
			Jobs   []plan.JobPlan `json:"jobs"`
		}{cfg.Path, o.From, int64(o.Window / time.Second), plans})
	}
	fmt.Fprintf(g.stdout, "plan of %s from %s for %s\n", cfg.Path, o.From.Format("2006-01-02 15:04 MST"), w.window)
	printPlans(g.stdout, plans)
	return nil
}

// jobsByName is cfg's jobs named, in their order, or every job.
func jobsByName(g *globals, cfg *config.Config, names []string) ([]config.Job, error) {
	if len(names) == 0 {
		return cfg.Jobs, nil
	}
	var jobs []config.Job
	for _, n := range names {
		j, ok := findJob(cfg, n)
		if !ok {
			return nil, noJob(g, cfg, n)
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printPlans is plan's table, each job's findings under its row (set
// apart from the table, so that a long finding does not widen a column).
func printPlans(out io.Writer, plans []plan.JobPlan) {
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tFIRES\tFIRST\tPERIOD\tP95 (RUNS)\tEXPECT")
	for _, p := range plans {
		first, period, measured, expect := "-", "-", "-", "-"
		if len(p.Fires) > 0 {
			first = p.Fires[0].Start.Format("2006-01-02 15:04:05 MST")
		}
		if p.PeriodMS > 0 {
			period = msDuration(p.PeriodMS)
		}
		if p.Measured != nil {
			measured = fmt.Sprintf("%s (%d)", msDuration(p.Measured.P95MS), p.Measured.Runs)
		}
		if e := p.Expect; e != nil {
			expect = expectText(e)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", p.Job, p.FireCount, first, period, measured, expect)
	}
	_ = tw.Flush()
	lines := strings.Split(strings.TrimSuffix(table.String(), "\n"), "\n")
	fmt.Fprintln(out, lines[0])
	for i, p := range plans {
		fmt.Fprintln(out, strings.TrimRight(lines[i+1], " "))
		for _, f := range p.Findings {
			fmt.Fprintf(out, "  ! %s\n", f.Text)
		}
	}
}

// expectText is a prediction in a few words: "144 runs, 144 skipped".
func expectText(e *plan.Expect) string {
	parts := []string{fmt.Sprintf("%d %s", e.Runs, plural(e.Runs, "run", "runs"))}
	for _, c := range []struct {
		n    int
		what string
	}{{e.Skipped, "skipped"}, {e.Queued, "queued"}, {e.Replaced, "replaced"}, {e.Overlapping, "overlapping"}, {e.TimedOut, "timed out"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	return strings.Join(parts, ", ")
}

// msDuration prints milliseconds as a Go duration.
func msDuration(n int64) string {
	return (time.Duration(n) * time.Millisecond).String()
}
