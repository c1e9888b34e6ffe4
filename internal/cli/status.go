package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/daemon/service"
	"cronvisor/internal/lock"
	"cronvisor/internal/store/history"
)

func newStatus(g *globals) *cobra.Command {
	var asJSON, fleetWide bool
	c := &cobra.Command{
		Use:   "status [JOB...]",
		Short: "One row per job: schedule, state, last outcome, last start, next run, lock holder",
		Long: `One row per job: name, schedule, state, last outcome, last start, next run and
lock holder. Asks the daemon serving the state dir when one runs; otherwise
reads the lock files and the history store directly. With JOB names, only
their rows. With --fleet, one row per host of the shared history
(history_backend postgres) instead: its state (up, stopped, lost),
version, pid, start, last heartbeat, clock offset and running jobs.`,
		RunE: func(cmd *cobra.Command, names []string) error {
			if fleetWide && len(names) > 0 {
				return usageError("status --fleet lists hosts and takes no JOB names")
			}
			if len(names) > 0 && !fleetWide {
				if done, err := namedStatus(context.Background(), g, names, asJSON); done {
					return err
				}
			}
			cfg, _, err := readConfig(g)
			if err != nil {
				return err
			}
			if fleetWide {
				return fleetStatus(g, cfg, asJSON)
			}
			ctx := context.Background()
			// The learned durations cost a read of every job's history
			// without a daemon: only JSON and named jobs show them.
			jobs, source, offline, err := jobStatuses(ctx, g, cfg, asJSON || len(names) > 0)
			if err != nil {
				return exitCode(1, err)
			}
			// Checked against the jobs shown: with a refused file on
			// disk, the daemon's differ from what the file could give.
			shown := make([]string, len(jobs))
			for i, j := range jobs {
				shown[i] = j.Name
			}
			for _, n := range names {
				if !slices.Contains(shown, n) {
					return noJobAmong(g, shown, n)
				}
			}
			if offline {
				if note := backendNotAsked(cfg); note != "" {
					fmt.Fprintln(g.stderr, note)
				}
			}
			if len(names) > 0 {
				jobs = slices.DeleteFunc(jobs, func(j ctl.JobStatus) bool { return !slices.Contains(names, j.Name) })
			}
			return printStatus(g, jobs, source, offline, asJSON, len(names) > 0)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "one JSON object per job per line")
	c.Flags().BoolVar(&fleetWide, "fleet", false, "one row per host of the shared history (history_backend postgres)")
	return c
}

// printStatus prints the jobs' statuses, as JSON lines or a table with
// the alerts and the source below, and for jobs named the durations
// their runs took.
func printStatus(g *globals, jobs []ctl.JobStatus, source string, offline, asJSON, named bool) error {
	if asJSON {
		enc := json.NewEncoder(g.stdout)
		for _, j := range jobs {
			if err := enc.Encode(j); err != nil {
				return err
			}
		}
		return nil
	}
	printStatusTable(g, jobs, offline)
	printProgress(g, jobs, time.Now())
	printAlerts(g, jobs)
	if named {
		printDurations(g, jobs)
	}
	if len(jobs) > 0 && jobs[0].History != "" {
		fmt.Fprintln(g.stderr, "cronvisor: "+jobs[0].History)
	}
	fmt.Fprintln(g.stderr, "("+source+")")
	return nil
}

// jobStatuses asks the daemon, or works it out from the state dir;
// offline says which.
func jobStatuses(ctx context.Context, g *globals, cfg *config.Config, learned bool) (jobs []ctl.JobStatus, source string, offline bool, err error) {
	// Only "no daemon" falls back to the state dir: a daemon that refused
	// us, or a socket of another user that we refuse, is said as it is.
	client, err := ctl.Dial(statedir.Dir(cfg.StateDir).Socket())
	if err == nil {
		defer client.Close()
		jobs, err := client.Jobs(ctx)
		if err == nil {
			d, err := client.Daemon(ctx)
			return jobs, daemonSource(cfg, d, err), false, nil
		}
		if !errors.Is(err, ctl.ErrNoDaemon) {
			return nil, "", false, err
		}
	} else if !errors.Is(err, ctl.ErrNoDaemon) {
		return nil, "", false, err
	}
	locker, err := readLocker(cfg)
	if err != nil {
		return nil, "", true, err
	}
	defer closeLocker(locker)
	jobs, err = offlineStatuses(ctx, g.stderr, cfg, locker, learned)
	return jobs, "no daemon running; read from " + cfg.StateDir, true, err
}

// daemonSource is status's source line for an answer of the daemon
// serving cfg's state dir, with what the daemon says of itself (d, or
// err from an older daemon without the route).
func daemonSource(cfg *config.Config, d ctl.DaemonStatus, err error) string {
	src := "from the daemon at " + statedir.Dir(cfg.StateDir).Socket()
	if err != nil {
		return src // an older daemon without the route
	}
	return src + daemonNote(d)
}

// daemonNote is what the daemon says of itself that status must show:
// how it contains runs, and that it is shutting down. (A refused reload
// needs no note here: status reads the same jobs.yaml, and refuses it
// with the same problems; `status JOB` takes them from d, see
// namedStatus.)
func daemonNote(d ctl.DaemonStatus) string {
	note := ""
	if d.Containment != "" {
		note = "; containment: " + d.Containment
	}
	if !d.ShuttingDown {
		return note
	}
	noun := "runs"
	if d.Finishing == 1 {
		noun = "run"
	}
	return note + fmt.Sprintf("; shutting down: %d %s finishing", d.Finishing, noun)
}

// offlineStatuses builds job statuses from jobs.yaml, the lock files, the
// pauses and the history store, without a daemon, through the daemon's own
// builder: nothing schedules the jobs, so no next run is given, and a
// job's state comes from its lock file. With a shared history, the last
// outcomes and starts are the fleet's; a line on stderr says when it did
// not answer.
func offlineStatuses(ctx context.Context, stderr io.Writer, cfg *config.Config, locker lock.Locker, learned bool) ([]ctl.JobStatus, error) {
	store, err := history.OpenReadOnly(statedir.Dir(cfg.StateDir).History())
	if err != nil && !errors.Is(err, history.ErrNoHistory) {
		return nil, err
	}
	pauses, err := service.LoadPauses(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	b := service.Statuses{Locks: locker, Pauses: service.PauseFile(pauses)}
	if store != nil {
		defer store.Close()
	}
	if shared, ok := sharedRecent(ctx, stderr, cfg); ok {
		b.History = shared // the fleet's last outcomes and starts
	} else if store != nil {
		b.History = service.ReadRecent(ctx, store, cfg.Jobs)
	}
	if learned && store != nil {
		b.Durations = newLearner(store, cfg).StatsOf
	}
	return b.Build(ctx, cfg.Jobs), nil
}

// printStatusTable prints the jobs; offline, nothing schedules them, and
// the next-run column says so rather than when a daemon would fire.
func printStatusTable(g *globals, jobs []ctl.JobStatus, offline bool) {
	color := wantColor(g)
	now := time.Now()
	w := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tSCHEDULE\tSTATE\tLAST\tLAST START\tNEXT RUN\tLOCK HOLDER")
	for _, j := range jobs {
		state := stateCell(j, now)
		next := "-"
		switch {
		case offline && j.Enabled:
			next = "not scheduled (no daemon)"
		case !j.NextRun.IsZero():
			next = "in " + j.NextRun.Sub(now).Round(time.Second).String()
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.Name, j.Schedule, state,
			paintOutcome(run.Outcome(dash(string(j.LastOutcome))), color), shortTime(j.LastStartedAt), next, holderText(j.Holder))
	}
	_ = w.Flush()
}

// stateCell is a job's state column: a run's time so far, who paused
// the job, or when a slot waiting for a retry starts its next attempt.
func stateCell(j ctl.JobStatus, now time.Time) string {
	state := string(j.State)
	switch {
	case j.State == ctl.StateRunning && !j.StartedAt.IsZero():
		state += " " + now.Sub(j.StartedAt).Round(time.Second).String()
	case j.State == ctl.StatePaused && j.PausedBy != nil:
		state += " by " + j.PausedBy.User + " since " + shortTime(j.PausedBy.At)
	case j.State == ctl.StateWaiting && j.WaitingFor != nil:
		state = j.WaitingFor.String()
	case j.State == ctl.StateRetrying:
		state = "retry " + strconv.Itoa(j.Attempt)
		if j.MaxAttempts > 0 {
			state += "/" + strconv.Itoa(j.MaxAttempts)
		}
		if !j.RetryAt.IsZero() {
			state += " at " + j.RetryAt.Local().Format(time.TimeOnly)
		}
	}
	return state
}

func holderText(h *run.Holder) string {
	if h == nil {
		return "-"
	}
	return h.String()
}

// printProgress lists, below the table, each running job's newest
// beat (docs/heartbeats.md): its progress and how long ago it came.
func printProgress(g *globals, jobs []ctl.JobStatus, now time.Time) {
	for _, j := range jobs {
		if j.State != ctl.StateRunning || j.LastBeatAt.IsZero() {
			continue
		}
		ago := max(now.Sub(j.LastBeatAt), 0).Round(time.Second)
		if j.Progress == "" {
			fmt.Fprintf(g.stdout, "%s: last beat %s ago\n", j.Name, ago)
			continue
		}
		fmt.Fprintf(g.stdout, "%s: progress %s (beat %s ago)\n", j.Name, j.Progress, ago)
	}
}

// printAlerts lists, below the table, each job's newest notification
// and its newest ping that failed (a daemon's; none without one).
func printAlerts(g *globals, jobs []ctl.JobStatus) {
	for _, j := range jobs {
		if n := j.LastNotification; n != "" {
			fmt.Fprintf(g.stdout, "%s: last notification %s\n", j.Name, n)
		}
		if j.FailedPing != "" {
			fmt.Fprintf(g.stdout, "%s: ping failed: %s\n", j.Name, j.FailedPing)
		}
	}
}
