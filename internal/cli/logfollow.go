package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"cronvisor/internal/ctl"
)

// overlapWait is how long the first live lines are held to be matched
// against the saved log read just after subscribing: the stream batches
// its events, so a line already in the file may still be on its way.
const overlapWait = time.Second

// followLog prints a run's saved output, then its live output from the
// daemon's event stream until the run ends. Subscribing comes first, so
// that nothing between the saved log and the stream is lost; the lines
// both carry are printed once (see dropOverlap).
func followLog(ctx context.Context, g *globals, c *ctl.Client, job, runID string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := c.Events(ctx)
	if err != nil {
		return verbError(err)
	}
	live, err := liveRun(ctx, c, job)
	if err != nil {
		return err
	}
	if runID != "" && runID != live { // over already: nothing to follow
		return printDaemonLog(ctx, g, c, job, runID)
	}
	runID = live
	if runID != "" && adopted(ctx, c, job, runID) {
		return followAdopted(ctx, g, c, job, runID)
	}
	if runID == "" {
		fmt.Fprintf(g.stderr, "(no run of %s is running; waiting for its next one)\n", job)
		if runID, err = nextRun(g, events, job); err != nil {
			return err
		}
	}
	var saved []string
	switch l, err := c.Log(ctx, job, runID); {
	case err == nil:
		printLines(g, l)
		saved = l.Lines
	case !errors.Is(err, ctl.ErrNoLog): // no output yet is fine
		return verbError(err)
	}
	return streamRun(g, events, runID, saved)
}

// nextRun waits for the job's next run to start, saying meanwhile when
// a fire of it waits for a resource's slot, and when that fire gives up
// (the job's other skips, one a fire for a busy job, are not said).
func nextRun(g *globals, events <-chan ctl.WireEvent, job string) (string, error) {
	waiting := ""
	for ev := range events {
		if ev.Job != job {
			continue
		}
		switch {
		case ev.Type == ctl.EventRunStarted:
			return ev.RunID, nil
		case ev.Type == ctl.EventRunWaiting:
			waiting = ev.RunID
			w := ctl.Waiting{Resource: ev.Resource, Held: ev.Held, Size: ev.Size}
			fmt.Fprintf(g.stderr, "(run %s is %s; it gives up at %s)\n", ev.RunID, w, shortTime(ev.Until))
		case ev.Type == ctl.EventRunSkipped && ev.RunID == waiting:
			fmt.Fprintf(g.stderr, "(run %s skipped: %s; waiting for the next one)\n", ev.RunID, ev.Reason)
		}
	}
	return "", exitCode(1, errors.New("the daemon's event stream ended (daemon stopped?)"))
}

// streamRun prints runID's output events until its run_finished, which
// the stream carries since it was subscribed before the run was found
// live.
func streamRun(g *globals, events <-chan ctl.WireEvent, runID string, saved []string) error {
	var held []string
	holding := true
	hold := time.NewTimer(overlapWait)
	defer hold.Stop()
	flush := func() {
		if holding {
			holding = false
			held = dropOverlap(saved, held)
		}
		for _, l := range held {
			fmt.Fprintln(g.stdout, l)
		}
		held = held[:0]
	}
	for {
		select {
		case <-hold.C:
			flush()
		case ev, ok := <-events:
			if !ok {
				flush()
				return exitCode(1, fmt.Errorf("the daemon's event stream ended before run %s did (daemon stopped?)", runID))
			}
			if ev.RunID != runID {
				continue
			}
			switch ev.Type {
			case ctl.EventRunOutput:
				for _, part := range strings.Split(ev.Line, "\n") {
					held = append(held, ev.Stream+" | "+part)
				}
				if !holding {
					flush()
				}
			case ctl.EventRunFinished:
				flush()
				fmt.Fprintf(g.stderr, "(run %s ended: %s)\n", runID, finishedNote(ev))
				return nil
			}
		}
	}
}

func finishedNote(ev ctl.WireEvent) string {
	s := string(ev.Outcome)
	if ev.ExitCode != nil {
		s += fmt.Sprintf(", exit %d", *ev.ExitCode)
	}
	if ev.Reason != "" {
		s += ": " + ev.Reason
	}
	return s
}

// dropOverlap removes from live the lines the saved log already printed:
// the longest start of live that is also the end of saved.
func dropOverlap(saved, live []string) []string {
	for k := min(len(saved), len(live)); k > 0; k-- {
		if equalLines(saved[len(saved)-k:], live[:k]) {
			return live[k:]
		}
	}
	return live
}

func equalLines(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
