package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// oneJob is the argument check of a verb on exactly one job.
func oneJob(_ *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usageError("want one job name, got %d arguments", len(args))
	}
	return nil
}

func newPauseResume(g *globals, verb string) *cobra.Command {
	var all bool
	short := "Pause jobs in the running daemon: their scheduled fires are skipped"
	if verb == "resume" {
		short = "Resume paused jobs in the running daemon"
	}
	c := &cobra.Command{
		Use:   verb + " JOB... | --all",
		Short: short,
		Long: short + `.
A pause is saved in the state dir and kept across daemon restarts. Scheduled
fires of a paused job are skipped; "trigger" and the console's run-now are
refused unless forced ("trigger --force", the console asks). The foreground
"run" still runs it.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return usageError("%s wants job names or --all, not both or neither", verb)
			}
			c, err := connectDaemon(g)
			if err != nil {
				return err
			}
			defer c.Close()
			ctx := cmd.Context()
			if all {
				if args, err = daemonJobNames(ctx, c); err != nil {
					return err
				}
			} else if err := checkDaemonJobs(ctx, c, args); err != nil {
				return err
			}
			act := c.Pause
			if verb == "resume" {
				act = c.Resume
			}
			for _, name := range args {
				if err := act(ctx, name); err != nil {
					return verbError(fmt.Errorf("%s %s: %w", verb, name, err))
				}
				fmt.Fprintf(g.stdout, "%s %s\n", verb+"d", name)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&all, "all", false, "every job the daemon runs")
	return c
}

func newTrigger(g *globals) *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "trigger JOB",
		Short: "Fire a job now in the running daemon, under its overlap policy",
		Long: `Fire JOB now in the running daemon as its schedule would: under its lock and
overlap policy (skip, queue, replace, allow), its output in the daemon's logs
and history. Unlike "run", which runs in the foreground, trigger returns once
the fire has started or been skipped. A paused job, or one with enabled: false,
is refused (exit 1) unless --force: then it runs this once and stays paused or
disabled.`,
		Args: oneJob,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connectDaemon(g)
			if err != nil {
				return err
			}
			defer c.Close()
			res, err := c.Trigger(cmd.Context(), args[0], ctl.FireOptions{Force: force})
			if err != nil {
				return unknownOr(cmd.Context(), c, args[0], err)
			}
			return reportFire(g, args[0], res)
		},
	}
	c.Flags().BoolVar(&force, "force", false, "fire a paused or disabled job all the same")
	return c
}

// reportFire says what a trigger did. A skip is the policy working, exit 0
// as for `run`; a refused fire and one that could not start are exit 1. A
// forced fire says on stderr what it went past.
func reportFire(g *globals, job string, res ctl.RunResult) error {
	if res.Forced && res.Hold != nil {
		fmt.Fprintf(g.stderr, "trigger %s: --force: fired although %s; %s\n", job, res.Hold, res.Hold.Stays())
	}
	switch {
	case res.Refused && res.Hold != nil:
		return exitCode(1, fmt.Errorf("trigger %s: refused: %s; use --force to run it anyway", job, res.Hold))
	case res.Refused:
		return exitCode(1, fmt.Errorf("trigger %s: refused: %s", job, res.Reason))
	case res.Started:
		fmt.Fprintf(g.stdout, "triggered %s: run %s started (cronvisor logs %s -f follows it)\n", job, res.RunID, job)
	case res.Outcome == run.Skipped:
		fmt.Fprintf(g.stdout, "triggered %s: skipped: %s\n", job, res.Reason)
	case res.Outcome != "":
		return exitCode(1, fmt.Errorf("triggered %s: %s: %s", job, res.Outcome, res.Reason))
	default:
		fmt.Fprintf(g.stdout, "triggered %s: run %s is waiting for its lock (overlap: queue)\n", job, res.RunID)
	}
	return nil
}

// unknownOr reports a daemon error; an unknown job gets the nearest names.
func unknownOr(ctx context.Context, c *ctl.Client, job string, err error) error {
	if cerr := checkDaemonJobs(ctx, c, []string{job}); cerr != nil {
		return cerr
	}
	return verbError(err)
}

func newKill(g *globals) *cobra.Command {
	var noWait bool
	c := &cobra.Command{
		Use:   "kill JOB",
		Short: "End a job's running runs in the running daemon, like a timeout",
		Long: `End JOB's runs in the running daemon, its own and those it adopted from a
supervisor that died: each run's process group gets SIGTERM, then SIGKILL after
kill_grace; each is recorded as interrupted, "killed by operator". kill waits
for the runs' end, up to their kill_grace and 5s (at most 30s), and says what
is true then: "1 run ended (interrupted)", or "1 run signalled: ending within
Ns" with when SIGKILL falls. A second kill while a run is being ended says so
and when its SIGKILL falls, without signalling it again. An adopted run whose keeper does not answer
within 2s (frozen) is signalled by the daemon itself, through its cgroup leaf
(else its process group), and kill says "signalled, keeper not answering" and
exits 1. A slot waiting for its next attempt (retries) gets none, and a fire
waiting for a resource's slot (on_full: wait) stops waiting and is recorded
skipped, "killed by operator while waiting for db". Exit 1 when no run of JOB
is running and nothing of it waits.`,
		Args: oneJob,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connectDaemon(g)
			if err != nil {
				return err
			}
			defer c.Close()
			res, err := c.Kill(cmd.Context(), args[0], ctl.KillOptions{NoWait: noWait})
			if err != nil {
				return unknownOr(cmd.Context(), c, args[0], err)
			}
			lines := res.Lines(args[0], nil)
			if len(lines) == 0 {
				return exitCode(1, fmt.Errorf("kill %s: nothing to kill: no run of %s is running", args[0], args[0]))
			}
			for _, l := range lines {
				fmt.Fprintln(g.stdout, l)
			}
			if res.Silent() {
				return exitCode(1, fmt.Errorf("kill %s: a run's keeper did not answer: the run was signalled without it", args[0]))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&noWait, "no-wait", false, "answer once the runs are signalled, without waiting for their end")
	return c
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func newReload(g *globals) *cobra.Command {
	var dry windowFlags
	var dryRun bool
	c := &cobra.Command{
		Use:   "reload [--dry-run [FILE]]",
		Short: "Make the running daemon reread jobs.yaml",
		Long: `Make the running daemon reread its jobs.yaml (as SIGHUP does). A file that
does not validate is refused: every problem is printed, the daemon keeps its
jobs, and the exit status is 1. A reload that applies logs what it changed
in one line (the jobs changed, added and removed, and the slots gained and
lost over the next day). With --dry-run nothing is reloaded: it prints what
cronvisor diff would between the jobs.yaml the daemon applied and FILE (by
default jobs.yaml as it is now), read as if it stood at jobs.yaml's path.
The daemon applies a saved jobs.yaml at once, so to look before it does,
write the edit to another file, run reload --dry-run FILE, then move it
into place.`,
		Example: `  cronvisor reload
  cronvisor reload --dry-run jobs.yaml.new`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && !dryRun || len(args) > 1 {
				return usageError("reload takes no argument; reload --dry-run takes at most one FILE")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if dryRun {
				return dryRunReload(g, dry, strings.Join(args, ""))
			}
			c, err := connectDaemon(g)
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.Reload(cmd.Context()); err != nil {
				return verbError(fmt.Errorf("reload refused: %w", err))
			}
			names, err := daemonJobNames(cmd.Context(), c)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "reloaded: %d %s\n", len(names), plural(len(names), "job", "jobs"))
			return nil
		},
	}
	c.Flags().BoolVar(&dryRun, "dry-run", false, "print what the reload would change, and change nothing")
	dry.add(c)
	return c
}
