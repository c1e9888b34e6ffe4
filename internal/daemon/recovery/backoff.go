package recovery

import (
	"context"
	"strings"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
)

// DiedInBackoff is the note a slot's last attempt gets when its
// supervisor died while the slot waited for a retry and nobody resumed
// it (no Config.Resume).
const DiedInBackoff = "no retry: supervisor died during the backoff"

// Resumption is a slot that a stopped or dead supervisor left waiting for
// a retry (its lock record's RetryAt), for Config.Resume.
type Resumption struct {
	Job     string
	Slot    time.Time
	Attempt int       // the last attempt run, recorded
	At      time.Time // when the next attempt is due
	Manual  bool
	RunID   string // the last attempt's
}

// inBackoff handles a dead supervisor's lock record that says its slot
// waited for a retry (lock.Record.RetryAt): the attempt it names has its
// end recorded. With Config.Resume the remaining attempts are run, in a
// goroutine of the Recoverer's; else, or when Resume does not take the
// slot on, the last attempt is recorded again as the slot's end with why
// (an Amends end, through the one path of every end). ok is false when
// history has no final row of the attempt, for the ordinary recovery to
// close it.
func (r *Recoverer) inBackoff(ctx context.Context, h lock.Record) (n int, ok bool, err error) {
	rec, found, err := r.cfg.Store.Record(ctx, h.RunID)
	if err != nil || !found || !rec.Outcome.Final() {
		return 0, false, err
	}
	r.remember(h.RunID)
	if strings.Contains(rec.Reason, "no retry: ") {
		return 0, true, nil // its slot's end is recorded already
	}
	if r.cfg.Resume != nil && r.resume(h, rec) {
		return 0, true, nil
	}
	return r.endRetries(ctx, h, rec, DiedInBackoff)
}

// resume runs the remaining attempts of rec's slot through Config.Resume
// in a goroutine that Close waits for; false once closed.
func (r *Recoverer) resume(h lock.Record, rec run.Record) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	res := Resumption{Job: rec.Job, Slot: rec.ScheduledAt, Attempt: max(rec.Attempt, 1), At: h.RetryAt,
		Manual: rec.Manual, RunID: rec.RunID}
	r.cfg.Log.Info("resuming the retries of a slot its supervisor left waiting", "job", res.Job, "run_id", res.RunID,
		"attempt", res.Attempt+1, "at", res.At, "supervisor_pid", h.SupervisorPID)
	waiting := amendedEnd(rec, "")
	waiting.Retrying, waiting.RetryAt = true, h.RetryAt
	r.cfg.Path.Resumed(waiting)
	r.wg.Go(func() {
		err := r.cfg.Resume(r.ctx, res)
		if err == nil || r.ctx.Err() != nil {
			return // ended, or left to the next supervisor as it was
		}
		_, _, err = r.endRetries(r.ctx, h, rec, "no retry: "+err.Error())
		r.logError("recording the end of a slot whose retries were not resumed", err, "run_id", rec.RunID)
	})
	return true
}

// endRetries records rec, the last attempt of h's slot, as the slot's end,
// note saying why no retry started.
func (r *Recoverer) endRetries(ctx context.Context, h lock.Record, rec run.Record, note string) (int, bool, error) {
	e := amendedEnd(rec, note)
	closed, err := r.cfg.Path.End(ctx, r.cfg.Store, e)
	if err != nil || !closed {
		return 0, err == nil, err
	}
	r.cfg.Log.Warn("a dead supervisor's slot waited for a retry; its last attempt is the slot's end",
		"job", h.Job, "run_id", h.RunID, "supervisor_pid", h.SupervisorPID, "reason", e.Reason)
	return 1, true, nil
}

// amendedEnd is the run.End that restates the recorded attempt r as its
// slot's end (run.End.Amends), note saying why no retry started.
func amendedEnd(r run.Record, note string) run.End {
	return run.End{Job: r.Job, RunID: r.RunID, Slot: r.ScheduledAt, Started: r.StartedAt, Ended: r.EndedAt,
		PID: r.PID, Outcome: r.Outcome, ExitCode: r.ExitCode, Reason: withNote(r.Reason, note),
		Manual: r.Manual, Attempt: r.Attempt, Usage: r.Usage, Amends: true, Recovered: true}
}

// withNote is reason followed by note, "; " between them when both are
// there.
func withNote(reason, note string) string {
	if reason == "" || note == "" {
		return reason + note
	}
	return reason + "; " + note
}
