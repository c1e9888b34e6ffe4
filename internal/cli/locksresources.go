package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"

	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/daemon"
	"cronvisor/internal/daemon/service"
)

// resourceStatuses are the declared resources: the daemon's (with its
// waiters) when one serves the state dir, else read from the lock
// backend; none when the backend cannot be asked from this shell.
func resourceStatuses(ctx context.Context, cfg *config.Config) ([]ctl.ResourceStatus, error) {
	if len(cfg.Resources) == 0 {
		return nil, nil
	}
	client, err := ctl.Dial(statedir.Dir(cfg.StateDir).Socket())
	if err == nil {
		defer client.Close()
		rs, err := client.Resources(ctx)
		if err == nil || !errors.Is(err, ctl.ErrNoDaemon) {
			return rs, err
		}
	} else if !errors.Is(err, ctl.ErrNoDaemon) {
		return nil, err
	}
	if backendNotAsked(cfg) != "" {
		return nil, nil
	}
	rs, err := daemon.ListResources(ctx, cfg)
	if err != nil && len(rs) == 0 {
		return nil, err
	}
	return service.ResourcesOf(rs), nil
}

// printResourcesTable is locks' second table: a row per slot of each
// resource, then a row per fire waiting for one.
func printResourcesTable(g *globals, rs []ctl.ResourceStatus) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintln(g.stdout)
	w := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "RESOURCE\tSLOT\tSTATE\tPID\tHOST\tJOB\tRUN ID\tSINCE")
	for _, r := range rs {
		for _, s := range r.Slots {
			slot := r.Resource + "/" + strconv.Itoa(s.Slot)
			if !s.Held {
				fmt.Fprintf(w, "%s\t%s\tfree\t-\t-\t-\t-\t-\n", r.Resource, slot)
				continue
			}
			fmt.Fprintf(w, "%s\t%s\theld\t%d\t%s\t%s\t%s\t%s\n", r.Resource, slot, s.PID, dash(s.Host), dash(s.Job), dash(s.RunID), shortTime(s.Since))
		}
		for _, wt := range r.Waiters {
			fmt.Fprintf(w, "%s\t-\twaiting (%d/%d held) until %s\t-\t%s\t%s\t%s\t%s\n", r.Resource, r.Held, r.Size,
				shortTime(wt.Until), dash(wt.Host), wt.Job, wt.RunID, shortTime(wt.Since))
		}
	}
	_ = w.Flush()
}

// printResourcesJSON adds to locks --json a line per slot ("lock":
// "db/0", with "resource") and per waiting fire ("lock": "db",
// "waiting": true), so that a script reading the locks' lines reads
// these as more of the same form.
func printResourcesJSON(g *globals, rs []ctl.ResourceStatus) error {
	enc := json.NewEncoder(g.stdout)
	for _, r := range rs {
		for _, s := range r.Slots {
			row := lockJSON{Lock: r.Resource + "/" + strconv.Itoa(s.Slot), Resource: r.Resource, Held: s.Held}
			if s.Held {
				row.PID, row.Host, row.Job, row.RunID, row.Since = s.PID, s.Host, s.Job, s.RunID, rfc3339(s.Since)
			}
			if err := enc.Encode(row); err != nil {
				return err
			}
		}
		for _, wt := range r.Waiters {
			row := lockJSON{Lock: r.Resource, Resource: r.Resource, Waiting: true, Host: wt.Host, Job: wt.Job,
				RunID: wt.RunID, Since: rfc3339(wt.Since), Until: rfc3339(wt.Until)}
			if err := enc.Encode(row); err != nil {
				return err
			}
		}
	}
	return nil
}
