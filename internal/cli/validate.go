package cli

import (
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"cronvisor/internal/config"
	"cronvisor/internal/proc/cgroup"
)

func newValidate(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "validate",
		Short: "Check jobs.yaml: one PATH:LINE:COL line per problem, exit 1 if any is an error",
		Long: `Check jobs.yaml. Errors and warnings are printed one per line on stdout as
PATH:LINE:COL: message, then, for a valid file, "PATH: valid, N job(s)". Warnings (legal but almost surely wrong: a schedule that
never fires, a fixed time in a DST gap, a timeout longer than the interval,
a timeout below the p99 of the job's recorded runs or far above it)
do not change the exit code: 0 when the file is valid, 1 otherwise.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, problems := config.Load(g.configPath)
			if cfg != nil {
				problems = append(problems, config.Lint(cfg, time.Now(), config.WithControllerCheck(controllerCheck()))...)
				problems = append(problems, timeoutWarnings(cfg)...)
			}
			config.Report(g.stdout, problems)
			if cfg == nil || config.HasErrors(problems) {
				return exitCode(1, nil)
			}
			// One report on one stream, in order: the problems, then the
			// verdict. `validate | grep`, a file of its output and an
			// editor's quickfix list all see the whole of it.
			fmt.Fprintf(g.stdout, "%s: valid, %d job(s)\n", g.configPath, len(cfg.Jobs))
			return nil
		},
	}
}

// loadConfig loads jobs.yaml for commands that need it, printing every
// problem; warnings are not printed here (validate shows them).
func loadConfig(g *globals) (*config.Config, error) {
	cfg, problems := config.Load(g.configPath)
	if cfg == nil {
		config.Report(g.stderr, problems)
		return nil, exitCode(1, fmt.Errorf("%s is not valid; see above (cronvisor validate)", g.configPath))
	}
	return cfg, nil
}

// jobsNamed is a --job flag's selection: cfg's job called name, or every
// job when name is "".
func jobsNamed(g *globals, cfg *config.Config, name string) ([]config.Job, error) {
	if name == "" {
		return cfg.Jobs, nil
	}
	j, ok := findJob(cfg, name)
	if !ok {
		return nil, noJob(g, cfg, name)
	}
	return []config.Job{j}, nil
}

// findJob returns the job called name.
func findJob(cfg *config.Config, name string) (config.Job, bool) {
	for _, j := range cfg.Jobs {
		if j.Name == name {
			return j, true
		}
	}
	return config.Job{}, false
}

// controllerCheck says whether this host's runs can take a cgroup
// controller's limits: their leaves' parent has it in its
// cgroup.subtree_control, which needs a usable cgroup v2 hierarchy and,
// under systemd, a delegated one.
func controllerCheck() config.ControllerCheck {
	h, why := cgroup.Detect()
	return func(controller string) error {
		if why != nil {
			return fmt.Errorf("runs here are contained by process tree: %v", why)
		}
		if !slices.Contains(h.Controllers, controller) {
			return fmt.Errorf("not enabled in %s", filepath.Join(h.Root, "cgroup.subtree_control"))
		}
		return nil
	}
}
