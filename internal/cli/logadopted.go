package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cronvisor/internal/ctl"
)

// adoptedPoll is how often an adopted run's log is read again: its keeper
// appends to the file, and no event tells of its lines.
const adoptedPoll = 250 * time.Millisecond

// adopted reports whether runID, job's running run, is an adopted one (its
// supervisor died; its keeper runs it on and appends its output to its log).
func adopted(ctx context.Context, c *ctl.Client, job, runID string) bool {
	jobs, err := c.Jobs(ctx)
	if err != nil {
		return false
	}
	for _, j := range jobs {
		if j.Name == job {
			return j.RunID == runID && j.State == ctl.StateRunning && j.Adopted
		}
	}
	return false
}

// followAdopted prints an adopted run's saved log, then the lines its
// keeper appends, read again every adoptedPoll, until the run is no longer
// running; then the run's record.
func followAdopted(ctx context.Context, g *globals, c *ctl.Client, job, runID string) error {
	var printed []string
	t := time.NewTicker(adoptedPoll)
	defer t.Stop()
	for {
		running := adopted(ctx, c, job, runID)
		l, err := c.Log(ctx, job, runID)
		if err != nil && !errors.Is(err, ctl.ErrNoLog) {
			return verbError(err)
		}
		for _, line := range dropOverlap(printed, l.Lines) {
			fmt.Fprintln(g.stdout, line)
		}
		printed = l.Lines
		if !running {
			fmt.Fprintf(g.stderr, "(run %s ended: see cronvisor history --job %s)\n", runID, job)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
