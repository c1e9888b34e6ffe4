// Package runner owns the scheduling loop, the guarded execution of runs and
// the event types every other part (history, logs, UI) consumes. It never
// imports the UI.
package runner

import (
	"iter"
	"strings"
	"time"

	"cronvisor/run"
)

// Event is something that happened to a job, in the past tense.
type Event interface {
	// JobName is the job the event belongs to ("" for supervisor-wide events).
	JobName() string
	// At is when it happened, from the runner's Clock.
	At() time.Time
}

// RunStarted: the run's process started under its lock.
type RunStarted struct {
	Job      string
	RunID    string
	Slot     time.Time
	Started  time.Time
	Deadline time.Time // zero when the job has no timeout
	PID      int
	Lock     string
	Manual   bool
	Attempt  int // 1 for the first attempt in the slot
	// LogOutput is the job's log_output: its lines also go to the
	// supervisor's own log (every listener still gets every RunOutput).
	LogOutput bool
	// InFlightRecorded: the run's lock record says it is in flight until
	// its end is recorded (lock.Grant.RecordsInFlight), so a run whose
	// supervisor dies is recorded from it even without a start row.
	InFlightRecorded bool
}

// RunOutput is output the run printed: one line, or the several lines
// read at once (joined by "\n", the last without its line ending). A job
// printing fast gets a few hundred events for a million lines.
type RunOutput struct {
	Job    string
	RunID  string
	Time   time.Time
	Stream string // "stdout" or "stderr"
	Line   string // one or more lines; see Lines
}

// Lines yields each line of the event.
func (e RunOutput) Lines() iter.Seq[string] { return strings.SplitSeq(e.Line, "\n") }

// RunFinished: the run ended (also when it could not start).
type RunFinished struct {
	Job      string
	RunID    string
	Slot     time.Time
	Started  time.Time // zero when it never started
	Ended    time.Time
	PID      int
	Outcome  run.Outcome
	ExitCode *int // nil when the process did not exit by itself
	Reason   string
	Manual   bool
	Attempt  int // 1 for the first attempt in the slot; 0 when it never started an attempt
	// Retrying: another attempt follows in the same slot, under the same lock.
	Retrying bool
	// Detached: the run was handed over to its keeper (HandOver) and
	// goes on; it is neither recorded nor reported ended here.
	Detached bool
	// Amends: this restates the end of an attempt reported before with
	// Retrying, whose retries were cut short in the backoff (shutdown,
	// kill, a dead supervisor's recovered slot): Reason says why, and the
	// slot ends here. It is no further run: counters of runs leave it out.
	Amends bool
	Err    error // the cause behind Outcome error, for errors.Is; not recorded
}

// RunSkipped: a fire that did not run, with why and, for lock conflicts,
// who held the lock.
type RunSkipped struct {
	Job    string
	RunID  string
	Slot   time.Time
	Time   time.Time
	Reason string
	Class  SkipClass // Reason's class, a bounded label for metrics
	Holder *run.Holder
	Manual bool
}

// SkipClass is the kind of reason a fire did not run, without the
// details a reason string carries (holders, times).
type SkipClass string

// Skip classes.
const (
	SkipLockHeld           SkipClass = "lock_held"
	SkipSlotAlreadyRun     SkipClass = "slot_already_run"
	SkipPaused             SkipClass = "paused"
	SkipMissed             SkipClass = "missed"
	SkipBackendUnreachable SkipClass = "backend_unreachable"
	SkipQueued             SkipClass = "queued"  // another fire already waits for the lock
	SkipDropped            SkipClass = "dropped" // a pending or queued fire ended by a reload or shutdown
	SkipDisabled           SkipClass = "disabled"
)

// ConfigReloaded: a new jobs.yaml took effect (Err == nil) or was refused.
type ConfigReloaded struct {
	Time     time.Time
	Jobs     int
	Problems []string
}

// JobName implements Event.
func (e RunStarted) JobName() string { return e.Job }

// At implements Event.
func (e RunStarted) At() time.Time { return e.Started }

// JobName implements Event.
func (e RunOutput) JobName() string { return e.Job }

// At implements Event.
func (e RunOutput) At() time.Time { return e.Time }

// JobName implements Event.
func (e RunFinished) JobName() string { return e.Job }

// At implements Event.
func (e RunFinished) At() time.Time { return e.Ended }

// JobName implements Event.
func (e RunSkipped) JobName() string { return e.Job }

// At implements Event.
func (e RunSkipped) At() time.Time { return e.Time }

// JobName implements Event.
func (e ConfigReloaded) JobName() string { return "" }

// At implements Event.
func (e ConfigReloaded) At() time.Time { return e.Time }

// ScheduleStalled: the job's next fire after After could not be computed
// (no instant within the schedule's search horizon matches). The job is
// not dropped: the scheduler tries again at Retry and lists it as
// unschedulable until a fire is found.
type ScheduleStalled struct {
	Job   string
	Time  time.Time
	After time.Time
	Retry time.Time
}

// JobName implements Event.
func (e ScheduleStalled) JobName() string { return e.Job }

// At implements Event.
func (e ScheduleStalled) At() time.Time { return e.Time }

// RunSlow: a run has been going for the job's warn_after and goes on.
type RunSlow struct {
	Job     string
	RunID   string
	Slot    time.Time
	Started time.Time
	Time    time.Time
	After   time.Duration // the job's warn_after
	Attempt int
}

// JobName implements Event.
func (e RunSlow) JobName() string { return e.Job }

// At implements Event.
func (e RunSlow) At() time.Time { return e.Time }
