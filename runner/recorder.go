package runner

import (
	"context"
	"errors"

	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
	"cronvisor/runner/ending"
)

// Recorder keeps the record of every fire: history. The Supervisor calls it
// itself, at fixed points of a fire, and never through the event fan-out,
// whose observers may lose events: a fire's end is recorded before its lock
// is released, so that a run whose lock is free is a run whose end is
// recorded (or, if it is not durable yet, whose lock record says it is
// still in flight, for the next supervisor to close: see package recovery).
type Recorder interface {
	// Admit reserves room for a run's records, before its exec; an error
	// refuses the run, which is then recorded as an error with the reason:
	// no run may start whose record could not be kept.
	Admit(runID string) error
	// Started records a run's start, right after its exec. It may return
	// before the record is durable: WriteEnd waits for both.
	Started(run.Start)
	// Output records what the run printed, in order (its log).
	Output(run.Output)
	// WriteEnd records a fire's end, also of a run that could not start,
	// through ending.Path. Its error says the record is not durable yet
	// (held in memory for a retry, or lost), and the supervisor then
	// logs it and releases the run's lock with its record left in flight.
	ending.Writer
	// WriteSkip records a fire that did not run, through ending.Path.
	ending.SkipWriter
}

// NopRecorder records nothing, durably: for a Supervisor whose fires need
// no history (tests and benchmarks of other parts).
type NopRecorder struct{}

// Admit admits every run.
func (NopRecorder) Admit(string) error { return nil }

// Started does nothing.
func (NopRecorder) Started(run.Start) {}

// Output does nothing.
func (NopRecorder) Output(run.Output) {}

// WriteEnd does nothing and reports the end durable.
func (NopRecorder) WriteEnd(context.Context, run.End) (bool, error) { return true, nil }

// WriteSkip does nothing.
func (NopRecorder) WriteSkip(run.Skip) {}

// endFire records f and tells the observers, through the one path every
// end takes (package ending), and reports whether its record is durable;
// one that is not is logged here, with the run, and left for the
// recorder to retry (the recorder's own log says why the store fails,
// rate-limited). locked says the fire holds a lock, whose record release
// leaves in flight.
func (s *Supervisor) endFire(f run.End, locked bool) bool {
	_, err := s.path.End(context.Background(), s.rec, f)
	if err == nil {
		return true
	}
	s.log.Warn("fire's end not durable yet; history retries it", "job", f.Job, "run_id", f.RunID,
		"outcome", string(f.Outcome), "lock_left_in_flight", locked, "err", err)
	return false
}

// release gives lease up once the run's end is recorded, after telling
// its backend the slot's outcome where it keeps one (setOutcome): with its record
// marked in flight when the end is not durable (recorded false), so that a
// supervisor dying before the recorder writes it leaves the run to the next
// one's recovery instead of losing it.
func (s *Supervisor) release(lease lock.Lease, end run.End, recorded bool) {
	s.setOutcome(lease, end)
	var err error
	if recorded {
		err = lease.Release()
	} else {
		err = lease.ReleaseInFlight()
	}
	if err != nil && !errors.Is(err, lock.ErrReleased) {
		s.log.Warn("releasing a run's lock", "run_id", lease.Record().RunID, "err", err)
	}
}

// Skip records and reports a fire the scheduler does not hand to Fire
// (missed while the supervisor slept, disabled, dropped by a reload).
func (s *Supervisor) Skip(ev run.Skip) {
	s.path.Skip(s.rec, ev)
}

// setOutcome gives end's outcome to a lease whose backend keeps each
// slot's (lock.OutcomeSetter: the SQL slot ledger). A failure is only
// logged: the run's record, not the ledger's row, is its end.
func (s *Supervisor) setOutcome(lease lock.Lease, end run.End) {
	o, ok := lease.(lock.OutcomeSetter)
	if !ok {
		return
	}
	if err := o.SetOutcome(end.Outcome, end.RunID); err != nil {
		s.log.Warn("recording the slot's outcome in the lock's ledger", "run_id", end.RunID, "err", err)
	}
}
