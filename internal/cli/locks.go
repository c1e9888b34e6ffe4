package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/daemon"
	"cronvisor/internal/daemon/service"
)

func newLocks(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "locks",
		Short: "One row per lock: held or free, holder pid, host, job, run id, since",
		Long: `One row per lock: held or free, and who holds it. Holders outside cronvisor
(for example flock(1) on the same file) are shown with their pid and command line.
With resources declared (jobs.yaml resources:), a second table has a row per
slot of each resource and its holder, and a row per fire of the daemon waiting
for one; --json prints them as more lines ("lock": "db/0" with "resource": "db";
"waiting": true for a waiting fire).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, err := readConfig(g)
			if err != nil {
				return err
			}
			statuses, note, err := lockStatuses(cmd.Context(), cfg)
			if err != nil {
				return exitCode(1, err)
			}
			resources, rerr := resourceStatuses(cmd.Context(), cfg)
			if asJSON {
				err = errors.Join(printLocksJSON(g, statuses), printResourcesJSON(g, resources))
			} else {
				printLocksTable(g, statuses)
				printResourcesTable(g, resources)
			}
			if rerr != nil {
				fmt.Fprintln(g.stderr, "cronvisor: the resources' slots could not be read:", rerr)
			}
			if note != "" {
				fmt.Fprintln(g.stderr, note)
			}
			return err
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "one JSON object per lock per line")
	return c
}

type lockJSON struct {
	Lock          string `json:"lock"`
	Held          bool   `json:"held"`
	PID           int    `json:"pid,omitempty"`
	Host          string `json:"host,omitempty"`
	Job           string `json:"job,omitempty"`
	RunID         string `json:"run_id,omitempty"`
	Slot          string `json:"slot,omitempty"`
	Since         string `json:"since,omitempty"`
	SupervisorPID int    `json:"supervisor_pid,omitempty"`
	Foreign       bool   `json:"foreign"`
	Cmdline       string `json:"cmdline,omitempty"`
	// Resource names the resource of a slot's line ("lock": "db/0") and
	// of a waiting fire's ("lock": "db", "waiting": true, until when).
	Resource string `json:"resource,omitempty"`
	Waiting  bool   `json:"waiting,omitempty"`
	Until    string `json:"until,omitempty"`
}

// lockStatuses asks the daemon serving the state dir when one runs (it
// needs no secret of ours), else the lock backend. A backend this shell
// cannot reach gives each job's lock with an unknown state, and note says
// why it was not asked.
func lockStatuses(ctx context.Context, cfg *config.Config) (out []lockRow, note string, err error) {
	client, err := ctl.Dial(statedir.Dir(cfg.StateDir).Socket())
	if err == nil {
		defer client.Close()
		locks, err := client.Locks(ctx)
		if err == nil {
			for _, l := range locks {
				out = append(out, lockRow{LockStatus: l})
			}
			return out, "", nil
		}
		if !errors.Is(err, ctl.ErrNoDaemon) {
			return nil, "", err
		}
	} else if !errors.Is(err, ctl.ErrNoDaemon) {
		return nil, "", err
	}
	if note := backendNotAsked(cfg); note != "" {
		all, _ := service.ListLocks(ctx, unaskedLocker{}, cfg.Jobs)
		for _, l := range all {
			out = append(out, lockRow{LockStatus: ctl.LockStatus{Lock: l.Name}, unknown: true})
		}
		return out, note, nil
	}
	locker, err := daemon.NewLocker(cfg)
	if err != nil {
		return nil, "", err
	}
	defer closeLocker(locker)
	all, err := service.ListLocks(ctx, locker, cfg.Jobs)
	if err != nil {
		return nil, "", err
	}
	for _, l := range all {
		out = append(out, lockRow{LockStatus: service.LockStatusOf(l)})
	}
	return out, "", nil
}

// lockRow is one row of locks; unknown when the backend was not asked.
type lockRow struct {
	ctl.LockStatus
	unknown bool
}

// printLocksJSON prints the rows known; a lock whose backend was not
// asked has no row rather than a made-up "held": false.
func printLocksJSON(g *globals, rows []lockRow) error {
	enc := json.NewEncoder(g.stdout)
	for _, s := range rows {
		if s.unknown {
			continue
		}
		row := lockJSON{Lock: s.Lock, Held: s.Held}
		if s.Held {
			row.PID, row.Host, row.Job, row.RunID = s.PID, s.Host, s.Job, s.RunID
			row.Slot, row.Since = rfc3339(s.Slot), rfc3339(s.Since)
			row.SupervisorPID, row.Foreign, row.Cmdline = s.SupervisorPID, s.Foreign, s.Cmdline
		}
		if err := enc.Encode(row); err != nil {
			return err
		}
	}
	return nil
}

func printLocksTable(g *globals, rows []lockRow) {
	w := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "LOCK\tSTATE\tPID\tHOST\tJOB\tRUN ID\tSINCE")
	for _, s := range rows {
		switch {
		case s.unknown:
			fmt.Fprintf(w, "%s\tunknown\t-\t-\t-\t-\t-\n", s.Lock)
			continue
		case !s.Held:
			fmt.Fprintf(w, "%s\tfree\t-\t-\t-\t-\t-\n", s.Lock)
			continue
		}
		job, run := s.Job, s.RunID
		if s.Foreign {
			job, run = "(foreign) "+s.Cmdline, "-"
		}
		fmt.Fprintf(w, "%s\theld\t%d\t%s\t%s\t%s\t%s\n", s.Lock, s.PID, dash(s.Host), dash(job), dash(run), shortTime(s.Since))
	}
	_ = w.Flush()
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
