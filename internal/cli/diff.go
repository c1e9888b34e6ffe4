package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/plan"
)

func newDiff(g *globals) *cobra.Command {
	var w windowFlags
	c := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "What changes from one jobs.yaml to another: keys, slots gained and lost, predicted effect",
		Long: `Compare two jobs.yaml files job by job over the window (24h from now unless
--window and --from say otherwise): the jobs added and removed, the keys
changed, the slots the new file adds and drops, the runs and skips its
runs' durations predict before and after (from NEW's state dir's history),
and what a reload would start at once (nothing: a reload never catches up)
or a start-up would (a larger catch_up). The last line sums it up, as the
daemon logs it on a reload. Nothing changes.`,
		Example: `  cronvisor diff jobs.yaml jobs.new.yaml
  cronvisor diff old.yaml new.yaml --window 7d --json`,
		Args: argsExactly(2, "OLD and NEW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o, err := w.options()
			if err != nil {
				return err
			}
			old, err := loadNamed(g, args[0])
			if err != nil {
				return err
			}
			cfg, err := loadNamed(g, args[1])
			if err != nil {
				return err
			}
			return printDiff(g, w, o, old, cfg)
		},
	}
	w.add(c)
	return c
}

// loadNamed loads the jobs.yaml at path, printing its problems when it
// is refused.
func loadNamed(g *globals, path string) (*config.Config, error) {
	cfg, problems := config.Load(path)
	if cfg == nil {
		config.Report(g.stderr, problems)
		return nil, exitCode(1, fmt.Errorf("%s is not valid; see above (cronvisor validate --config %s)", path, path))
	}
	return cfg, nil
}

// dryRunReload is `reload --dry-run [FILE]`: the diff from the jobs.yaml
// the running daemon applied (its copy in the state dir) to FILE, or to
// jobs.yaml as it is now, read as if it stood at jobs.yaml's path (so
// that relative paths resolve as they will once it is moved there). It
// asks the daemon only whether it runs.
func dryRunReload(g *globals, w windowFlags, file string) error {
	o, err := w.options()
	if err != nil {
		return err
	}
	settings, problems := config.LoadSettingsForReading(g.configPath)
	if settings == nil {
		config.Report(g.stderr, problems)
		return exitCode(1, fmt.Errorf("%s cannot be read", g.configPath))
	}
	c, err := connectDaemon(g)
	if err != nil {
		return err
	}
	c.Close()
	if file == "" {
		file = g.configPath
	}
	cfg, err := parseAt(g, file, g.configPath, "reload would be refused: %s is not valid; the daemon would keep its jobs")
	if err != nil {
		return err
	}
	applied := statedir.Dir(settings.StateDir).Applied()
	old, err := parseAt(g, applied, g.configPath, "%s no longer validates here")
	if err != nil {
		return err
	}
	return printDiff(g, w, o, old, cfg)
}

// parseAt parses the file at path as if it stood at at; refused says
// what its refusal means (with the path).
func parseAt(g *globals, path, at, refused string) (*config.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, exitCode(1, fmt.Errorf("cannot read %s: %w", path, err))
	}
	cfg, problems := config.Parse(at, data)
	if cfg == nil {
		config.Report(g.stderr, problems)
		return nil, exitCode(1, fmt.Errorf(refused, path))
	}
	return cfg, nil
}

func printDiff(g *globals, w windowFlags, o plan.Options, old, cfg *config.Config) error {
	stats, err := storedStats(cfg, jobNames(cfg))
	if err != nil {
		fmt.Fprintf(g.stderr, "cronvisor: the history was not read; nothing is predicted from durations: %v\n", err)
	}
	o.Stats = stats
	diffs := plan.Diff(old.Jobs, cfg.Jobs, o)
	summary := plan.Summary(diffs, o.Window)
	if w.asJSON {
		if diffs == nil {
			diffs = []plan.JobDiff{}
		}
		return writeJSON(g.stdout, struct {
			Old     string         `json:"old"`
			New     string         `json:"new"`
			From    time.Time      `json:"from"`
			Window  int64          `json:"window_s"`
			Jobs    []plan.JobDiff `json:"jobs"`
			Summary string         `json:"summary"`
		}{old.Path, cfg.Path, o.From, int64(o.Window / time.Second), diffs, summary})
	}
	for _, d := range diffs {
		printJobDiff(g.stdout, d)
	}
	fmt.Fprintln(g.stdout, summary)
	return nil
}

func printJobDiff(out io.Writer, d plan.JobDiff) {
	fmt.Fprintf(out, "%s (%s)\n", d.Job, d.Change)
	for _, k := range d.Keys {
		fmt.Fprintf(out, "  %s: %s → %s\n", k.Key, orNone(k.Old), orNone(k.New))
	}
	fmt.Fprintf(out, "  slots: +%d -%d", len(d.Added), len(d.Removed))
	if len(d.Added) > 0 {
		fmt.Fprintf(out, " (first added %s)", d.Added[0].Format("2006-01-02 15:04:05 MST"))
	}
	if len(d.Removed) > 0 {
		fmt.Fprintf(out, " (first removed %s)", d.Removed[0].Format("2006-01-02 15:04:05 MST"))
	}
	fmt.Fprintln(out)
	if d.Effect != "" {
		fmt.Fprintf(out, "  %s\n", d.Effect)
	}
	fmt.Fprintf(out, "  at reload: %s\n", d.AtReload)
	if d.OnStart != "" {
		fmt.Fprintf(out, "  at start-up: %s\n", d.OnStart)
	}
	for _, f := range d.Findings {
		fmt.Fprintf(out, "  ! %s\n", f.Text)
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
