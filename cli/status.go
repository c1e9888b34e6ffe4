package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"cronvisor/config"
	"cronvisor/ctl"
	"cronvisor/history"
	"cronvisor/lock"
)

func newStatus(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "status",
		Short: "One row per job: schedule, state, last outcome, last start, next run, lock holder",
		Long: `One row per job: name, schedule, state, last outcome, last start, next run and
lock holder. Asks the daemon serving the state dir when one runs; otherwise
reads the lock files and the history store directly.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(g)
			if err != nil {
				return err
			}
			ctx := context.Background()
			jobs, source, err := jobStatuses(ctx, cfg)
			if err != nil {
				return exitCode(1, err)
			}
			if asJSON {
				enc := json.NewEncoder(g.stdout)
				for _, j := range jobs {
					if err := enc.Encode(j); err != nil {
						return err
					}
				}
				return nil
			}
			printStatusTable(g, jobs)
			if len(jobs) > 0 && jobs[0].History != "" {
				fmt.Fprintln(g.stderr, "cronvisor: "+jobs[0].History)
			}
			fmt.Fprintln(g.stderr, "("+source+")")
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "one JSON object per job per line")
	return c
}

// jobStatuses asks the daemon, or works it out from the state dir.
func jobStatuses(ctx context.Context, cfg *config.Config) ([]ctl.JobStatus, string, error) {
	// Only "no daemon" falls back to the state dir: a daemon that refused
	// us, or a socket of another user that we refuse, is said as it is.
	client, err := ctl.Dial(socketPath(cfg))
	if err == nil {
		defer client.Close()
		jobs, err := client.Jobs(ctx)
		if err == nil {
			return jobs, "from the daemon at " + socketPath(cfg), nil
		}
		if !errors.Is(err, ctl.ErrNoDaemon) {
			return nil, "", err
		}
	} else if !errors.Is(err, ctl.ErrNoDaemon) {
		return nil, "", err
	}
	jobs, err := offlineStatuses(ctx, cfg, time.Now())
	return jobs, "no daemon running; read from " + cfg.StateDir, err
}

// offlineStatuses builds job statuses from jobs.yaml, the lock files and
// the history store, without a daemon.
func offlineStatuses(ctx context.Context, cfg *config.Config, now time.Time) ([]ctl.JobStatus, error) {
	locker, err := newLocker(cfg)
	if err != nil {
		return nil, err
	}
	store, err := history.OpenReadOnly(historyPath(cfg))
	if err != nil && !errors.Is(err, history.ErrNoHistory) {
		return nil, err
	}
	latest := map[string]history.Record{}
	if store != nil {
		defer store.Close()
		names := make([]string, len(cfg.Jobs))
		for i, j := range cfg.Jobs {
			names[i] = j.Name
		}
		if l, err := store.Latest(ctx, names); err == nil {
			latest = l // without it, status shows no last outcome
		}
	}
	out := make([]ctl.JobStatus, 0, len(cfg.Jobs))
	for _, j := range cfg.Jobs {
		js := ctl.JobStatus{Name: j.Name, Schedule: j.Schedule, Timezone: j.Timezone, Lock: j.Lock,
			Enabled: j.Enabled, State: ctl.StateIdle}
		if js.Timezone == "" {
			js.Timezone = "Local"
		}
		if j.Enabled && j.Sched != nil {
			js.NextRun = j.Sched.Next(now)
		}
		if !j.Enabled {
			js.State = ctl.StateDisabled
		}
		if r, ok := latest[j.Name]; ok {
			js.LastOutcome, js.LastStartedAt, js.LastEndedAt = r.Outcome, r.StartedAt, r.EndedAt
		}
		if j.Overlap != config.OverlapAllow {
			if st, err := locker.Inspect(ctx, j.Lock); err == nil && st.Held {
				js.Holder = ctl.HolderOf(st.Holder)
				if holdsOwnRun(st.Holder, j.Name) {
					js.State, js.RunID, js.PID, js.StartedAt = ctl.StateRunning, st.Holder.RunID, st.Holder.PID, st.Holder.Since
				}
			}
		}
		out = append(out, js)
	}
	return out, nil
}

func holdsOwnRun(h lock.Holder, job string) bool { return !h.Foreign && h.Job == job }

func printStatusTable(g *globals, jobs []ctl.JobStatus) {
	color := wantColor(g)
	now := time.Now()
	w := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tSCHEDULE\tSTATE\tLAST\tLAST START\tNEXT RUN\tLOCK HOLDER")
	for _, j := range jobs {
		state := string(j.State)
		if j.State == ctl.StateRunning && !j.StartedAt.IsZero() {
			state += " " + now.Sub(j.StartedAt).Round(time.Second).String()
		}
		next := "-"
		if !j.NextRun.IsZero() {
			next = "in " + j.NextRun.Sub(now).Round(time.Second).String()
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.Name, j.Schedule, state,
			paintOutcome(dash(j.LastOutcome), color), shortTime(j.LastStartedAt), next, holderText(j.Holder))
	}
	_ = w.Flush()
}

func holderText(h *ctl.Holder) string {
	if h == nil {
		return "-"
	}
	if h.Foreign {
		return fmt.Sprintf("pid %d (foreign: %s)", h.PID, h.Cmdline)
	}
	return fmt.Sprintf("pid %d@%s run %s", h.PID, h.Host, h.RunID)
}
