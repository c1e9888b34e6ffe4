package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/spf13/cobra"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/daemon/service"
)

func newLogs(g *globals) *cobra.Command {
	var follow bool
	var runID string
	c := &cobra.Command{
		Use:   "logs JOB [-f] [--run RUN_ID]",
		Short: "Show a run's output, or follow a live run with -f",
		Long: `Show the output of one of JOB's runs, each line tagged with its stream
("stdout | ..." or "stderr | ..."): the newest run by default, or --run RUN_ID.
Without a daemon the saved logs of the state dir are read. With -f, a run that
is still running is followed through the daemon until it ends; when none is
running, -f waits for JOB's next run and follows that.`,
		Args: oneJob,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, _, err := readConfig(g)
			if err != nil {
				return err
			}
			path := statedir.Dir(cfg.StateDir).Socket()
			c, err := ctl.Dial(path)
			switch {
			case errors.Is(err, ctl.ErrNoDaemon) && follow:
				return errNoDaemon(g, path)
			case errors.Is(err, ctl.ErrNoDaemon):
				return offlineLog(g, cfg, args[0], runID)
			case err != nil:
				return exitCode(1, err)
			}
			defer c.Close()
			if err := checkDaemonJobs(cmd.Context(), c, args); err != nil {
				return err
			}
			if follow {
				return followLog(cmd.Context(), g, c, args[0], runID)
			}
			return printDaemonLog(cmd.Context(), g, c, args[0], runID)
		},
	}
	c.Flags().BoolVarP(&follow, "follow", "f", false, "follow a live run (or the next one) until it ends")
	c.Flags().StringVar(&runID, "run", "", "the run to show (default: the newest)")
	return c
}

// printDaemonLog prints a saved log read by the daemon.
func printDaemonLog(ctx context.Context, g *globals, c *ctl.Client, job, runID string) error {
	if runID == "" {
		id, err := newestRun(ctx, c, job)
		if err != nil {
			return err
		}
		runID = id
	}
	l, err := c.Log(ctx, job, runID)
	if err != nil {
		return verbError(err)
	}
	printLines(g, l)
	return nil
}

func printLines(g *globals, l ctl.RunLog) {
	if l.Omitted > 0 {
		fmt.Fprintf(g.stderr, "(the first %d bytes of run %s's log are left out)\n", l.Omitted, l.RunID)
	}
	for _, line := range l.Lines {
		fmt.Fprintln(g.stdout, line)
	}
}

// ranOutcomes are the outcomes of runs that started, so have a log.
var ranOutcomes = []run.Outcome{run.OK, run.Failed, run.Timeout, run.Replaced, run.Interrupted}

// newestRun is the job's running run, else its newest run that started.
func newestRun(ctx context.Context, c *ctl.Client, job string) (string, error) {
	if id, err := liveRun(ctx, c, job); err != nil || id != "" {
		return id, err
	}
	recs, err := c.History(ctx, ctl.HistoryQuery{Job: job, Outcomes: ranOutcomes, Limit: 1})
	if err != nil {
		return "", verbError(err)
	}
	if len(recs) == 0 {
		return "", exitCode(1, fmt.Errorf("%s has no run with a log yet", job))
	}
	return recs[0].RunID, nil
}

// liveRun is the job's running run, "" when none runs.
func liveRun(ctx context.Context, c *ctl.Client, job string) (string, error) {
	jobs, err := c.Jobs(ctx)
	if err != nil {
		return "", verbError(err)
	}
	for _, j := range jobs {
		if j.Name == job && j.State == ctl.StateRunning {
			return j.RunID, nil
		}
	}
	return "", nil
}

// offlineLog reads a saved log straight from the state dir.
func offlineLog(g *globals, cfg *config.Config, job, runID string) error {
	if _, ok := findJob(cfg, job); !ok {
		return noJob(g, cfg, job)
	}
	if runID == "" {
		if runID = newestLogFile(cfg.StateDir, job); runID == "" {
			return exitCode(1, fmt.Errorf("%s has no saved log in %s", job, statedir.Dir(cfg.StateDir).JobLogs(job)))
		}
	}
	l, err := service.ReadRunLog(cfg.StateDir, job, runID)
	if err != nil {
		return exitCode(1, err)
	}
	fmt.Fprintf(g.stderr, "(no daemon running; read from %s)\n", statedir.Dir(cfg.StateDir).RunLog(job, runID))
	printLines(g, l)
	return nil
}

// newestLogFile is the run id of the job's most recently written log.
func newestLogFile(stateDir, job string) string {
	dir := statedir.Dir(stateDir).JobLogs(job)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	type log struct {
		id  string
		mod int64
	}
	var logs []log
	for _, e := range ents {
		id, ok := statedir.RunLogID(e.Name())
		if info, err := e.Info(); err == nil && ok {
			logs = append(logs, log{id, info.ModTime().UnixNano()})
		}
	}
	if len(logs) == 0 {
		return ""
	}
	sort.Slice(logs, func(i, j int) bool {
		return logs[i].mod > logs[j].mod || logs[i].mod == logs[j].mod && logs[i].id > logs[j].id
	})
	return logs[0].id
}
