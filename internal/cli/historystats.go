package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"cronvisor/internal/base/durations"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/daemon/service"
	"cronvisor/internal/store/history"
)

// statsRow is one line of `history --stats`: a job's learned figures on
// one host, or across the fleet (Host fleetHost).
type statsRow struct {
	Job  string `json:"job"`
	Host string `json:"host,omitempty"` // "" for this host's store alone
	ctl.Durations
}

// fleetHost names the row of every host's runs together.
const fleetHost = "(fleet)"

// runStats prints `history --stats`: each job's figures from the shared
// history per host and for the fleet when there is one, else from this
// host's store.
func runStats(g *globals, f historyFlags) error {
	if len(f.outcomes) > 0 || f.overlaps {
		return usageError("--stats takes no --outcome or --overlaps: it reads the successful runs")
	}
	cfg, _, err := readConfig(g)
	if err != nil {
		return err
	}
	jobs, err := jobsNamed(g, cfg, f.job)
	if err != nil {
		return err
	}
	window := cfg.History.KeepAge
	if since, err := parseSince(f.since); err != nil {
		return usageError("--since %q: %v", f.since, err)
	} else if since > 0 {
		window = min(window, since)
	}
	rows, err := statsRows(g, cfg, jobs, window)
	if err != nil {
		return exitCode(1, err)
	}
	if f.asJSON {
		enc := json.NewEncoder(g.stdout)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	printStatsTable(g, rows, cfg.HistoryBackend.Type == config.HistoryPostgres)
	return nil
}

// statsRows reads the jobs' successful runs within window and makes
// their rows: per host and for the fleet from the shared history, else
// from this host's store.
func statsRows(g *globals, cfg *config.Config, jobs []config.Job, window time.Duration) ([]statsRow, error) {
	names := make([]string, len(jobs))
	for i, j := range jobs {
		names[i] = j.Name
	}
	now := time.Now()
	since := now.Add(-window)
	if shared := sharedHistory(g.stderr, cfg); shared != nil {
		defer shared.Close()
		ctx, cancel := context.WithTimeout(context.Background(), sharedWait)
		defer cancel()
		samples, err := shared.OKSamples(ctx, names, since, durations.Window)
		if err == nil {
			return fleetRows(jobs, samples, now, window), nil
		}
		sharedDown(g.stderr, err)
	}
	store, err := history.OpenReadOnly(statedir.Dir(cfg.StateDir).History())
	if errors.Is(err, history.ErrNoHistory) {
		return hostRows(jobs, nil, now, window), nil
	}
	if err != nil {
		return nil, err
	}
	defer store.Close()
	samples, err := store.OKSamples(context.Background(), names, since, durations.Window)
	if err != nil {
		return nil, err
	}
	return hostRows(jobs, samples, now, window), nil
}

// hostRows is a row per job of one host's samples.
func hostRows(jobs []config.Job, samples map[string][]durations.Sample, now time.Time, window time.Duration) []statsRow {
	rows := make([]statsRow, 0, len(jobs))
	for _, j := range jobs {
		rows = append(rows, statsRowOf(j, "", samples[j.Name], now, window))
	}
	return rows
}

// fleetRows is, per job, a row for every host's runs together and one
// per host, in host order.
func fleetRows(jobs []config.Job, samples map[string][]durations.Sample, now time.Time, window time.Duration) []statsRow {
	var rows []statsRow
	for _, j := range jobs {
		all := samples[j.Name] // newest first, every host's
		rows = append(rows, statsRowOf(j, fleetHost, all, now, window))
		byHost := map[string][]durations.Sample{}
		for _, s := range all {
			byHost[s.Host] = append(byHost[s.Host], s)
		}
		hosts := make([]string, 0, len(byHost))
		for h := range byHost {
			hosts = append(hosts, h)
		}
		slices.Sort(hosts)
		for _, h := range hosts {
			rows = append(rows, statsRowOf(j, h, byHost[h], now, window))
		}
	}
	return rows
}

func statsRowOf(j config.Job, host string, samples []durations.Sample, now time.Time, window time.Duration) statsRow {
	row := statsRow{Job: j.Name, Host: host}
	if d := service.DurationsOf(j, durations.Compute(durations.Windowed(samples, now, window))); d != nil {
		row.Durations = *d
	}
	return row
}

func printStatsTable(g *globals, rows []statsRow, hosts bool) {
	w := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
	head := "JOB\tRUNS\tP50\tP95\tP99\tMAX\tSUGGESTED TIMEOUT"
	if hosts {
		head = "JOB\tHOST\tRUNS\tP50\tP95\tP99\tMAX\tSUGGESTED TIMEOUT"
	}
	fmt.Fprintln(w, head)
	for _, r := range rows {
		host := ""
		if hosts {
			host = r.Host + "\t"
		}
		if r.Runs == 0 {
			fmt.Fprintf(w, "%s\t%s0\t-\t-\t-\t-\t-\n", r.Job, host)
			continue
		}
		suggested := "-"
		if r.SuggestedTimeoutMS > 0 {
			suggested = msText(r.SuggestedTimeoutMS)
		}
		fmt.Fprintf(w, "%s\t%s%d\t%s\t%s\t%s\t%s\t%s\n", r.Job, host, r.Runs, msText(r.P50MS), msText(r.P95MS),
			msText(r.P99MS), msText(r.MaxMS), suggested)
	}
	_ = w.Flush()
}
