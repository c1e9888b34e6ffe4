package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

const (
	// callTimeout bounds each call to the source, so a wedged daemon shows
	// up as an error rather than a console that never updates.
	callTimeout = 5 * time.Second
	// maxBatch is how many pending events one message carries: a burst of
	// output lines becomes one redraw, not hundreds.
	maxBatch = 256
	// historyPage is how many records the history view asks for.
	historyPage = 500
	// jobPage is how many records the detail view asks for.
	jobPage = 50
)

// errStreamEnded means the source closed the event stream: the daemon
// went away or shut down.
var errStreamEnded = errors.New("event stream ended")

// Messages from commands to the model.
type (
	snapshotMsg struct {
		jobs      []ctl.JobStatus
		locks     []ctl.LockStatus
		resources []ctl.ResourceStatus // with the locks, from a source that has them
		withLocks bool                 // locks were read
		daemon    *ctl.DaemonStatus    // nil when not read (an older daemon)
		err       error
	}
	historyMsg struct {
		job  string // "" for the history view's page
		recs []run.Record
		err  error
	}
	subscribedMsg struct {
		ch  <-chan ctl.WireEvent
		err error
	}
	// eventsMsg is a batch of events from one subscription; closed means
	// the stream ended after them.
	eventsMsg struct {
		ch     <-chan ctl.WireEvent
		events []ctl.WireEvent
		closed bool
	}
	tickMsg      time.Time
	reconnectMsg struct{ attempt int }
	actionMsg    struct {
		verb, job string
		done      string // what happened, for the status line
		warn      bool   // done says the action did not happen (a skipped run)
		// hold is what refused a run-now: the console then asks whether
		// to force it.
		hold *ctl.FireHold
		err  error
	}
	logMsg struct {
		job, run string
		lines    []string
		err      error
	}
)

// resourceSource is a Source that lists the declared resources (the
// daemon's client); the Locks tab shows them under the locks.
type resourceSource interface {
	Resources(ctx context.Context) ([]ctl.ResourceStatus, error)
}

// readResources reads them with the locks (unless those failed) from a
// source that has them; the locks' table stands without them.
func readResources(ctx context.Context, src Source, locksErr error) []ctl.ResourceStatus {
	rs, ok := src.(resourceSource)
	if !ok || locksErr != nil {
		return nil
	}
	out, _ := rs.Resources(ctx)
	return out
}

// bounded is the context of one call to the source.
func bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, callTimeout)
}

// fetchSnapshot reads jobs and, with withLocks, locks and the daemon's
// state, together, so that the two tables never disagree for a whole
// refresh period. Locks are skipped on the per-second refreshes the locks
// view is not showing: each read makes the daemon inspect every lock file.
func (m Model) fetchSnapshot(withLocks bool) tea.Cmd {
	src, parent := m.src, m.ctx
	return func() tea.Msg {
		ctx, cancel := bounded(parent)
		defer cancel()
		jobs, err := src.Jobs(ctx)
		if err != nil {
			return snapshotMsg{err: err}
		}
		msg := snapshotMsg{jobs: jobs}
		if !withLocks {
			return msg
		}
		// The daemon's own state rides with the locks' slower refresh: its
		// changes also come as events, and this read is for a console that
		// attached after them.
		if d, err := src.Daemon(ctx); err == nil {
			msg.daemon = &d
		}
		msg.locks, msg.err = src.Locks(ctx)
		msg.resources = readResources(ctx, src, msg.err)
		msg.withLocks = true
		return msg
	}
}

// fetchHistory reads a page of history: job's for the detail view, or
// everyone's when job is "".
func (m Model) fetchHistory(job string) tea.Cmd {
	src, parent, limit := m.src, m.ctx, historyPage
	if job != "" {
		limit = jobPage
	}
	return func() tea.Msg {
		ctx, cancel := bounded(parent)
		defer cancel()
		recs, err := src.History(ctx, ctl.HistoryQuery{Job: job, Limit: limit})
		return historyMsg{job: job, recs: recs, err: err}
	}
}

// subscribe opens the event stream. It lives as long as the model's
// context, not a call's.
func (m Model) subscribe() tea.Cmd {
	src, ctx := m.src, m.ctx
	return func() tea.Msg {
		ch, err := src.Events(ctx)
		return subscribedMsg{ch: ch, err: err}
	}
}

// waitEvents blocks for the next event, then takes the others that follow
// within eventSettle of each other, up to maxBatch: the daemon sends a
// burst in one write, but the client decodes it line by line, and a batch
// per line meant a redraw per event. The model re-arms it after each
// batch.
func waitEvents(ch <-chan ctl.WireEvent) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return eventsMsg{ch: ch, closed: true}
		}
		batch := []ctl.WireEvent{ev}
		settle := time.NewTimer(eventSettle)
		defer settle.Stop()
		for len(batch) < maxBatch {
			select {
			case ev, ok := <-ch:
				if !ok {
					return eventsMsg{ch: ch, events: batch, closed: true}
				}
				batch = append(batch, ev)
				settle.Reset(eventSettle)
			case <-settle.C:
				return eventsMsg{ch: ch, events: batch}
			}
		}
		return eventsMsg{ch: ch, events: batch}
	}
}

// eventSettle is how long waitEvents waits for the next event of a burst.
const eventSettle = 5 * time.Millisecond

// offBeat is the wait from now to the next middle of a second, in
// (0, 1s].
func offBeat(now time.Time) time.Duration {
	d := time.Second/2 - time.Duration(now.Nanosecond())
	if d <= 0 {
		d += time.Second
	}
	return d
}

// tick redraws countdowns once a second, half-way through the second.
// Schedules fire on whole seconds, so the console's periodic work (the
// redraw, the re-read of the daemon's state it may start) happens as far
// as it can from the job starts it shows: on a small machine it would
// otherwise compete with them.
func tick() tea.Cmd {
	return tea.Tick(offBeat(time.Now()), func(t time.Time) tea.Msg { return tickMsg(t) })
}

// backoff is the wait before reconnect attempt n (1-based): 0.5 s doubling
// to at most 10 s.
func backoff(n int) time.Duration {
	d := 500 * time.Millisecond
	for i := 1; i < n && d < 10*time.Second; i++ {
		d *= 2
	}
	return min(d, 10*time.Second)
}

func reconnectAfter(n int) tea.Cmd {
	return tea.Tick(backoff(n), func(time.Time) tea.Msg { return reconnectMsg{attempt: n} })
}

// action runs one operator action against the source: verb is run,
// run --force, pause, resume, kill or reload.
func (m Model) action(verb, job string) tea.Cmd {
	src, parent, now := m.src, m.ctx, m.c.now
	return func() tea.Msg {
		bound := callTimeout
		if verb == "kill" {
			bound += ctl.KillWaitMax // the daemon waits for the runs' end
		}
		ctx, cancel := context.WithTimeout(parent, bound)
		defer cancel()
		msg := actionMsg{verb: verb, job: job}
		switch verb {
		case "run", "run --force":
			var res ctl.RunResult
			res, msg.err = src.RunNow(ctx, job, ctl.FireOptions{Force: verb == "run --force"})
			msg.done, msg.warn = runNowText(job, res, now())
			if res.Refused && res.Hold != nil {
				msg.hold = res.Hold
			}
		case "pause":
			msg.done, msg.err = "paused "+job, src.Pause(ctx, job)
		case "resume":
			msg.done, msg.err = "resumed "+job, src.Resume(ctx, job)
		case "kill":
			var res ctl.KillResult
			res, msg.err = src.Kill(ctx, job, ctl.KillOptions{})
			msg.done, msg.warn = killText(job, res, now())
		case "reload":
			msg.done, msg.err = "reloaded jobs.yaml", src.Reload(ctx)
		default:
			msg.err = fmt.Errorf("unknown action %q", verb)
		}
		return msg
	}
}

// runNowText says what a run-now fire did; warn when it did not start.
// A forced one says what it went past.
func runNowText(job string, r ctl.RunResult, now time.Time) (text string, warn bool) {
	at := func(t time.Time) string { return clock(now, t) }
	switch {
	case r.Refused && r.Hold != nil:
		return job + " not started: refused: " + r.Hold.Say(at), true
	case r.Refused:
		return job + " not started: refused: " + r.Reason, true
	case r.Started && r.Forced && r.Hold != nil:
		return "started run " + r.RunID + " of " + job + " although " + r.Hold.Say(at) + "; " + r.Hold.Stays(), false
	case r.Started:
		return "started run " + r.RunID + " of " + job, false
	case r.Outcome == run.Skipped:
		return job + " not started: skipped, " + r.Reason, true
	case r.Outcome != "" && r.Reason != "":
		return job + " not started: " + string(r.Outcome) + ", " + r.Reason, true
	case r.Outcome != "":
		return job + " not started: " + string(r.Outcome), true
	}
	return "asked to run " + job + " (run " + r.RunID + "); it had not started when the daemon answered", true
}

// killText says what a kill did, as `cronvisor kill` does; warn when
// nothing ran.
func killText(job string, r ctl.KillResult, now time.Time) (text string, warn bool) {
	lines := r.Lines(job, func(t time.Time) string { return clock(now, t) })
	if len(lines) == 0 {
		return job + " is not running: nothing to kill", true
	}
	return strings.Join(lines, "; "), false
}

// logReader reads saved run logs: the source, or the state dir while the
// source is lost.
type logReader interface {
	Log(ctx context.Context, job, runID string) (ctl.RunLog, error)
}

// readLog reads the end of a run's saved log from r. A log cut at its
// start says how much is not shown.
func readLog(ctx context.Context, r logReader, job, runID string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := bounded(ctx)
		defer cancel()
		l, err := r.Log(ctx, job, runID)
		msg := logMsg{job: job, run: runID, lines: l.Lines, err: err}
		if err == nil && l.Omitted > 0 {
			msg.lines = append([]string{fmt.Sprintf("… [first %d bytes not shown]", l.Omitted)}, l.Lines...)
		}
		return msg
	}
}
