package recovery

import (
	"time"

	"cronvisor/proc"
	"cronvisor/run"
)

// keptEnd is a keeper's End as the history records it.
type keptEnd struct {
	outcome  run.Outcome
	exitCode *int
	ended    time.Time
	reason   string
	usage    run.Usage
}

// readEnd reads the End the keeper of a dead supervisor's run wrote, if
// it did: the run's real end, recorded instead of "interrupted".
func readEnd(path string) (keptEnd, bool) {
	e, err := proc.ReadEnd(path)
	if err != nil || e.Ended.IsZero() {
		return keptEnd{}, false
	}
	k := keptEnd{ended: e.Ended, reason: e.Reason, usage: e.Usage}
	if e.ExitCode >= 0 {
		code := e.ExitCode
		k.exitCode = &code
	}
	switch {
	case e.Outcome == proc.TimedOut:
		k.outcome = run.Timeout
	case e.Outcome == proc.Canceled && e.Replaced:
		k.outcome = run.Replaced
	case e.Outcome == proc.Canceled:
		k.outcome = run.Interrupted
	case e.ExitCode == 0:
		k.outcome = run.OK
	default:
		k.outcome = run.Failed
	}
	if k.outcome != run.OK {
		k.reason = e.Usage.WithOOM(k.reason) // as the supervisor would have said
	}
	return k, true
}
