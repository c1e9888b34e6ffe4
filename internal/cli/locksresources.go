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
// resource, then a row per fire waiting for one, with when it gives up.
func printResourcesTable(g *globals, rs []ctl.ResourceStatus) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintln(g.stdout)
	w := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "RESOURCE\tSLOT\tSTATE\tPID\tHOST\tJOB\tRUN ID\tSINCE\tGIVES UP")
	for _, r := range rs {
		for _, s := range r.Slots {
			slot := slotName(r, s)
			if !s.Held {
				fmt.Fprintf(w, "%s\t%s\tfree\t-\t-\t-\t-\t-\t-\n", r.Resource, slot)
				continue
			}
			job := dash(s.Job)
			if s.Foreign {
				job = "(foreign) " + s.Cmdline
			}
			fmt.Fprintf(w, "%s\t%s\theld\t%d\t%s\t%s\t%s\t%s\t-\n", r.Resource, slot, s.PID, dash(s.Host), job, dash(s.RunID), shortTime(s.Since))
		}
		for _, wt := range r.Waiters {
			fmt.Fprintf(w, "%s\t-\twaiting (%d/%d held)\t-\t%s\t%s\t%s\t%s\t%s\n", r.Resource, r.Held, r.Size,
				dash(wt.Host), wt.Job, wt.RunID, shortTime(wt.Since), shortTime(wt.Until))
		}
	}
	_ = w.Flush()
}

// printResourcesJSON adds to locks --json a line per slot, a lock line
// like the job locks' ("lock": "db/0") with its resource, the resource's
// size and waiters: a script that reads every line as a lock reads a slot
// rightly (it is a lock of the backend, held or free), and a waiting fire,
// which is no lock, makes no line of its own.
func printResourcesJSON(g *globals, rs []ctl.ResourceStatus) error {
	enc := json.NewEncoder(g.stdout)
	for _, r := range rs {
		waiters := make([]waiterJSON, len(r.Waiters))
		for i, w := range r.Waiters {
			waiters[i] = waiterJSON{Job: w.Job, RunID: w.RunID, Host: w.Host, Since: rfc3339(w.Since), Until: rfc3339(w.Until)}
		}
		for _, s := range r.Slots {
			row := lockJSON{Lock: slotName(r, s), Held: s.Held, Resource: r.Resource, Size: r.Size, Waiters: waiters}
			if s.Held {
				row.PID, row.Host, row.Job, row.RunID, row.Since = s.PID, s.Host, s.Job, s.RunID, rfc3339(s.Since)
				row.Foreign, row.Cmdline = s.Foreign, s.Cmdline
			}
			if err := enc.Encode(row); err != nil {
				return err
			}
		}
	}
	return nil
}

// slotName is a slot as runs and people name it: "db/0".
func slotName(r ctl.ResourceStatus, s ctl.SlotStatus) string {
	return r.Resource + "/" + strconv.Itoa(s.Slot)
}
