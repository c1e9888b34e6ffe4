package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"cronvisor/daemon"
	"cronvisor/lock"
	"cronvisor/service"
)

func newLocks(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "locks",
		Short: "One row per lock: held or free, holder pid, host, job, run id, since",
		Long: `One row per lock: held or free, and who holds it. Holders outside cronvisor
(for example flock(1) on the same file) are shown with their pid and command line.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(g)
			if err != nil {
				return err
			}
			locker, err := daemon.NewLocker(cfg)
			if err != nil {
				return exitCode(1, err)
			}
			statuses, err := service.ListLocks(context.Background(), locker, cfg.Jobs)
			if err != nil {
				return exitCode(1, err)
			}
			if asJSON {
				return printLocksJSON(g, statuses)
			}
			printLocksTable(g, statuses)
			return nil
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
}

func printLocksJSON(g *globals, statuses []lock.Status) error {
	enc := json.NewEncoder(g.stdout)
	for _, s := range statuses {
		row := lockJSON{Lock: s.Name, Held: s.Held}
		if s.Held {
			h := s.Record
			row.PID, row.Host, row.Job, row.RunID = h.PID, h.Host, h.Job, h.RunID
			row.Slot, row.Since = rfc3339(h.Slot), rfc3339(h.Since)
			row.SupervisorPID, row.Foreign, row.Cmdline = h.SupervisorPID, h.Foreign, h.Cmdline
		}
		if err := enc.Encode(row); err != nil {
			return err
		}
	}
	return nil
}

func printLocksTable(g *globals, statuses []lock.Status) {
	w := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "LOCK\tSTATE\tPID\tHOST\tJOB\tRUN ID\tSINCE")
	for _, s := range statuses {
		if !s.Held {
			fmt.Fprintf(w, "%s\tfree\t-\t-\t-\t-\t-\n", s.Name)
			continue
		}
		h := s.Record
		job, run := h.Job, h.RunID
		if h.Foreign {
			job, run = "(foreign) "+h.Cmdline, "-"
		}
		fmt.Fprintf(w, "%s\theld\t%d\t%s\t%s\t%s\t%s\n", s.Name, h.PID, dash(h.Host), dash(job), dash(run), shortTime(h.Since))
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
