package recovery

import (
	"context"

	"cronvisor/lock"
	"cronvisor/run"
)

// DiedInBackoff is the note a slot's last attempt gets when its
// supervisor died while the slot waited for a retry.
const DiedInBackoff = "no retry: supervisor died during the backoff"

// retryEnder is a Store that can record a slot's retries as cut short
// (*history.Store).
type retryEnder interface {
	EndRetries(ctx context.Context, runID, note string) (run.Record, bool, error)
}

// endBackoff handles a dead supervisor's lock record that says its slot
// waited for a retry (lock.Record.RetryAt): the attempt it names has its
// end recorded, and is recorded again as the slot's end with
// DiedInBackoff, then reported to Config.RetriesEnded. The remaining
// attempts are not run: their backoff was measured from an attempt of
// the dead supervisor's, and the job's next slot may be due. ok is false
// when history has no final row of the attempt, for the ordinary
// recovery to close it.
func (r *Recoverer) endBackoff(ctx context.Context, h lock.Record) (n int, ok bool, err error) {
	st, can := r.cfg.Store.(retryEnder)
	if !can {
		return 0, false, nil
	}
	rec, changed, err := st.EndRetries(ctx, h.RunID, DiedInBackoff)
	if err != nil || rec.RunID == "" || !rec.Outcome.Final() {
		return 0, false, err
	}
	r.remember(h.RunID)
	if !changed {
		return 0, true, nil // recorded so already, by another recoverer
	}
	r.cfg.Log.Warn("a dead supervisor's slot waited for a retry; its last attempt is the slot's end",
		"job", h.Job, "run_id", h.RunID, "supervisor_pid", h.SupervisorPID, "reason", rec.Reason)
	if r.cfg.RetriesEnded != nil {
		r.cfg.RetriesEnded(rec)
	}
	return 1, true, nil
}
