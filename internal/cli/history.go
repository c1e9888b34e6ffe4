package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/store/history"
)

type historyFlags struct {
	job      string
	outcomes []string
	since    string
	limit    int
	asJSON   bool
	overlaps bool
	stats    bool
}

// knownOutcomes are the values --outcome takes: the final ones and running.
func knownOutcomes() []string {
	names := []string{}
	for _, o := range append(run.Finals(), run.Running) {
		names = append(names, string(o))
	}
	return names
}

func newHistory(g *globals) *cobra.Command {
	var f historyFlags
	c := &cobra.Command{
		Use:   "history",
		Short: "Runs and skips, newest first",
		Long: `Runs and skips, newest first, read from the history store in the state dir
(works with or without a daemon). --overlaps groups each skip under the run
that held the lock. --stats prints, per job, the figures learned from its
newest successful runs (at most 50, within keep_age or --since): with a
shared history, for the fleet and per host.`,
		Example: `  cronvisor history --job sync_orders --outcome skipped --since 24h
  cronvisor history --overlaps --since 1h
  cronvisor history --stats --job sync_orders
  cronvisor history --json --limit 1000 | jq .`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.stats {
				return runStats(g, f)
			}
			return runHistory(g, f)
		},
	}
	c.Flags().StringVar(&f.job, "job", "", "only this job")
	c.Flags().StringArrayVar(&f.outcomes, "outcome", nil, "only these outcomes (repeatable): "+strings.Join(knownOutcomes(), ", "))
	c.Flags().StringVar(&f.since, "since", "", "only records of the last DURATION (e.g. 90m, 24h, 1d, 2w)")
	c.Flags().IntVar(&f.limit, "limit", 100, "at most N records (0: all)")
	c.Flags().BoolVar(&f.asJSON, "json", false, "one JSON object per line")
	c.Flags().BoolVar(&f.overlaps, "overlaps", false, "group skips with the run that caused them")
	c.Flags().BoolVar(&f.stats, "stats", false, "per job, what its last 50 successful runs took (p50, p95, p99, max) and a suggested timeout")
	return c
}

// historyFilter is the query the flags ask for; a bad flag is a usage error.
func historyFilter(f historyFlags) (history.Filter, error) {
	filter := history.Filter{Job: f.job, Limit: f.limit}
	for _, s := range f.outcomes {
		o := run.Outcome(s)
		if !o.Final() && o != run.Running {
			return filter, usageError("--outcome %q: want one of %s", o, strings.Join(knownOutcomes(), ", "))
		}
		filter.Outcomes = append(filter.Outcomes, o)
	}
	since, err := parseSince(f.since)
	if err != nil {
		return filter, usageError("--since %q: %v", f.since, err)
	}
	if since > 0 {
		filter.Since = time.Now().Add(-since)
	}
	if f.limit < 0 {
		return filter, usageError("--limit must not be negative")
	}
	return filter, nil
}

func runHistory(g *globals, f historyFlags) error {
	filter, err := historyFilter(f)
	if err != nil {
		return err
	}
	cfg, _, err := readConfig(g)
	if err != nil {
		return err
	}
	_, inConfig := findJob(cfg, f.job)
	hosts := cfg.HistoryBackend.Type == config.HistoryPostgres
	if !f.overlaps { // --overlaps groups this host's records
		if recs, ok := sharedRecords(g.stderr, cfg, filter); ok {
			if f.job != "" && !inConfig && len(recs) == 0 {
				return noJob(g, cfg, f.job)
			}
			return showHistory(g, recs, f.asJSON, hosts)
		}
	}
	store, err := history.OpenReadOnly(statedir.Dir(cfg.StateDir).History())
	if errors.Is(err, history.ErrNoHistory) {
		if f.job != "" && !inConfig {
			return noJob(g, cfg, f.job)
		}
		fmt.Fprintf(g.stderr, "cronvisor: no history yet in %s\n", cfg.StateDir)
		return nil
	}
	if err != nil {
		return exitCode(1, err)
	}
	defer store.Close()
	ctx := context.Background()
	if f.job != "" && !inConfig {
		// A job since removed from the file still has its records.
		if recs, err := store.Query(ctx, history.Filter{Job: f.job, Limit: 1}); err == nil && len(recs) == 0 {
			return noJob(g, cfg, f.job)
		}
	}
	if f.overlaps {
		groups, err := store.Overlaps(ctx, filter)
		if err != nil {
			return exitCode(1, err)
		}
		return printOverlaps(g, groups, f.asJSON)
	}
	if f.asJSON {
		if err := streamJSON(ctx, g, store, filter); err != nil {
			return exitCode(1, err)
		}
		return nil
	}
	recs, err := store.Query(ctx, filter)
	if err != nil {
		return exitCode(1, err)
	}
	return showHistory(g, recs, false, hosts)
}

// streamJSON writes the records filter matches as JSON lines as it reads
// them from this host's store: `--limit 0` over a history of millions of
// rows holds one record at a time, not all of them.
func streamJSON(ctx context.Context, g *globals, store *history.Store, filter history.Filter) error {
	w := bufio.NewWriterSize(g.stdout, 64<<10)
	enc := json.NewEncoder(w)
	err := store.Each(ctx, filter, func(r run.Record) error { return enc.Encode(r) })
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// showHistory prints the records, with a HOST column when they may come
// from several hosts.
func showHistory(g *globals, recs []run.Record, asJSON, hosts bool) error {
	if asJSON {
		return printJSONLines(g, recs)
	}
	printHistoryTable(g, recs, hosts)
	return nil
}

// printJSONLines writes each record as one line of JSON.
func printJSONLines(g *globals, recs []run.Record) error {
	enc := json.NewEncoder(g.stdout)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

func printHistoryTable(g *globals, recs []run.Record, hosts bool) {
	color := wantColor(g)
	w := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
	host := func(r run.Record) string {
		if !hosts {
			return ""
		}
		return dash(r.Host) + "\t"
	}
	head := "SLOT\tJOB\tOUTCOME\tDURATION\tEXIT\tRUN ID\tREASON"
	if hosts {
		head = "SLOT\tHOST\tJOB\tOUTCOME\tDURATION\tEXIT\tRUN ID\tREASON"
	}
	fmt.Fprintln(w, head)
	for _, r := range recs {
		fmt.Fprintf(w, "%s\t%s%s\t%s\t%s\t%s\t%s\t%s\n", shortTime(recordTime(r)), host(r), r.Job,
			paintOutcome(r.Outcome, color)+attemptText(r.Attempt), human(r), exitText(r.ExitCode), r.RunID, dash(r.Reason))
	}
	_ = w.Flush()
}

// attemptText marks the retries of a slot beside their outcome.
func attemptText(n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf(" (attempt %d)", n)
}

func printOverlaps(g *globals, groups []history.Overlap, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(g.stdout)
		for _, o := range groups {
			row := struct {
				Run       run.Record   `json:"run"`
				Synthetic bool         `json:"synthetic"`
				Skips     []run.Record `json:"skips"`
			}{o.Run, o.Synthetic, o.Skips}
			if err := enc.Encode(row); err != nil {
				return err
			}
		}
		return nil
	}
	for _, o := range groups {
		r := o.Run
		who := fmt.Sprintf("run %s of %s (%s, %s)", r.RunID, r.Job, r.Outcome, human(r))
		if o.Synthetic {
			who = fmt.Sprintf("holder pid %d@%s (not in this history)", r.PID, r.Host)
		}
		fmt.Fprintf(g.stdout, "%s caused %d skip(s):\n", who, len(o.Skips))
		for _, s := range o.Skips {
			fmt.Fprintf(g.stdout, "  %s  %s  %s\n", shortTime(recordTime(s)), s.Job, s.Reason)
		}
	}
	return nil
}

// parseSince reads a Go duration, or whole days (1d) and weeks (2w), the
// units an operator asks history in; no unit is refused, as in jobs.yaml.
func parseSince(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := config.ParseDuration(s)
	switch {
	case errors.Is(err, config.ErrDurationRange):
		return 0, fmt.Errorf("too long")
	case err != nil:
		return 0, fmt.Errorf("not a duration; write it like 90m, 24h, 1d or 2w")
	case d < 0:
		return 0, fmt.Errorf("must not be negative")
	}
	return d, nil
}

func recordTime(r run.Record) time.Time {
	for _, t := range []time.Time{r.ScheduledAt, r.StartedAt, r.EndedAt} {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// tableTimeLayout is how the status, locks and history tables print a
// time: local, to the second, with the zone so a pasted row is not
// ambiguous. --json keeps RFC 3339.
const tableTimeLayout = "2006-01-02 15:04:05 MST"

func shortTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format(tableTimeLayout)
}

func human(r run.Record) string {
	if r.StartedAt.IsZero() {
		return "-"
	}
	if r.EndedAt.IsZero() {
		return "running"
	}
	d := r.EndedAt.Sub(r.StartedAt)
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func exitText(c *int) string {
	if c == nil {
		return "-"
	}
	return fmt.Sprint(*c)
}

// wantColor: colours only on a terminal, and never with NO_COLOR set.
func wantColor(g *globals) bool {
	if _, set := os.LookupEnv("NO_COLOR"); set {
		return false
	}
	f, ok := g.stdout.(*os.File)
	return ok && isTerminal(f)
}

func paintOutcome(o run.Outcome, color bool) string {
	if !color {
		return string(o)
	}
	code := map[run.Outcome]string{run.OK: "32", run.Failed: "31", run.Timeout: "31", run.Error: "31",
		run.Skipped: "33", run.Replaced: "35", run.Interrupted: "35", run.Running: "36"}[o]
	if code == "" {
		return string(o)
	}
	return "\x1b[" + code + "m" + string(o) + "\x1b[0m"
}
