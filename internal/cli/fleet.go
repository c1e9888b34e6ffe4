package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"cronvisor/internal/config"
	"cronvisor/internal/store/fleet"
)

// fleetStatus is `status --fleet`: one row per host of the shared
// history, read from the server (no daemon is asked).
func fleetStatus(g *globals, cfg *config.Config, asJSON bool) error {
	if cfg.HistoryBackend.Type != config.HistoryPostgres {
		return exitCode(1, fmt.Errorf("status --fleet: %s has no history_backend: {type: postgres, url: ...}; "+
			"the fleet's hosts are known only to a shared history", cfg.Path))
	}
	host, _ := os.Hostname()
	store, err := fleet.Open(cfg.HistoryBackend.URL, host)
	if err != nil {
		return exitCode(1, fmt.Errorf("%s:%d:%d: history_backend: %w", cfg.Path, cfg.HistoryBackend.Line, cfg.HistoryBackend.Col, err))
	}
	defer store.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hosts, err := store.Hosts(ctx)
	if err != nil {
		return exitCode(1, err)
	}
	if asJSON {
		enc := json.NewEncoder(g.stdout)
		for _, h := range hosts {
			if err := enc.Encode(fleetJSONOf(h)); err != nil {
				return err
			}
		}
		return nil
	}
	printFleetTable(g, hosts)
	fmt.Fprintf(g.stderr, "(from the shared history; up: a heartbeat within %s, beats every %s)\n", fleet.UpWithin, fleet.BeatEvery)
	return nil
}

// fleetJSON is one host of `status --fleet --json`.
type fleetJSON struct {
	Host          string        `json:"host"`
	State         string        `json:"state"`
	Version       string        `json:"version"`
	PID           int           `json:"pid"`
	StartedAt     string        `json:"started_at"`
	LastBeat      string        `json:"last_beat"`
	SilentMS      int64         `json:"silent_ms"`
	ClockOffsetMS int64         `json:"clock_offset_ms"`
	Running       []fleetRunRow `json:"running"`
}

type fleetRunRow struct {
	Job       string `json:"job"`
	RunID     string `json:"run_id"`
	StartedAt string `json:"started_at"`
}

func fleetJSONOf(h fleet.Host) fleetJSON {
	j := fleetJSON{Host: h.Name, State: string(h.State), Version: h.Version, PID: h.PID,
		StartedAt: rfc3339(h.Started), LastBeat: rfc3339(h.LastBeat), SilentMS: h.Silent.Milliseconds(),
		ClockOffsetMS: h.Offset.Milliseconds(), Running: []fleetRunRow{}}
	for _, r := range h.Running {
		j.Running = append(j.Running, fleetRunRow{Job: r.Job, RunID: r.RunID, StartedAt: rfc3339(r.Started)})
	}
	return j
}

// maxFleetOffset is the clock offset the table flags, as the daemon's
// log warns of it.
const maxFleetOffset = time.Second

// printFleetTable prints one row per host. LAST BEAT is the age by the
// server's clock, so that this machine's own clock does not skew it.
func printFleetTable(g *globals, hosts []fleet.Host) {
	w := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "HOST\tSTATE\tVERSION\tPID\tSTARTED\tLAST BEAT\tCLOCK OFFSET\tRUNNING")
	for _, h := range hosts {
		pid, beat, offset := "-", "never", "-"
		if h.PID != 0 {
			pid = fmt.Sprint(h.PID)
		}
		if !h.LastBeat.IsZero() {
			beat = h.Silent.Round(100*time.Millisecond).String() + " ago"
			offset = fmtOffset(h.Offset)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.Name, h.State, dash(h.Version), pid,
			shortTime(h.Started), beat, offset, runningJobs(h.Running))
	}
	_ = w.Flush()
}

// fmtOffset is a signed offset, flagged past maxFleetOffset.
func fmtOffset(d time.Duration) string {
	s := d.Round(time.Millisecond).String()
	if d >= 0 {
		s = "+" + s
	}
	if d.Abs() > maxFleetOffset {
		s += " (over " + maxFleetOffset.String() + "!)"
	}
	return s
}

// runningJobs names the running runs' jobs, "-" for none.
func runningJobs(rs []fleet.RunningRun) string {
	if len(rs) == 0 {
		return "-"
	}
	jobs := make([]string, len(rs))
	for i, r := range rs {
		jobs[i] = r.Job
	}
	return strings.Join(jobs, ", ")
}
