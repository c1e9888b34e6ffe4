package run

import (
	"iter"
	"strings"
	"time"
)

// Event is something that happened to a job, in the past tense. The
// engine (package runner) emits them; the store, the observers and the
// wire read them, so they live here, below all of them.
type Event interface {
	// JobName is the job the event belongs to ("" for supervisor-wide events).
	JobName() string
	// At is when it happened, from the engine's clock.
	At() time.Time
}

// Start: the run's process started under its lock.
type Start struct {
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
	// supervisor's own log (every listener still gets every Output).
	LogOutput bool
	// InFlightRecorded: the run's lock record says it is in flight until
	// its end is recorded (lock.Grant.RecordsInFlight), so a run whose
	// supervisor dies is recorded from it even without a start row.
	InFlightRecorded bool
	// Resources are the resource slots the run holds ("db/1": slot 1 of
	// resource db), taken after its lock; ResourceWait is how long it
	// waited for them (on_full: wait). Empty and zero for a job that uses
	// none.
	Resources    []string
	ResourceWait time.Duration
}

// Output is output the run printed: one line, or the several lines read
// at once (joined by "\n", the last without its line ending). A job
// printing fast gets a few hundred events for a million lines.
type Output struct {
	Job    string
	RunID  string
	Time   time.Time
	Stream string // "stdout" or "stderr"
	Line   string // one or more lines; see Lines
}

// Lines yields each line of the event.
func (e Output) Lines() iter.Seq[string] { return strings.SplitSeq(e.Line, "\n") }

// End: the run ended (also when it could not start).
type End struct {
	Job      string
	RunID    string
	Slot     time.Time
	Started  time.Time // zero when it never started
	Ended    time.Time
	PID      int
	Outcome  Outcome
	ExitCode *int // nil when the process did not exit by itself
	Reason   string
	// Class is the kind of cause behind an error or interrupted Outcome
	// (ClassStartFailed, ClassBackendUnreachable, ...), "" when the
	// outcome says it all: a bounded label, as Skip's.
	Class   Class
	Manual  bool
	Attempt int // 1 for the first attempt in the slot; 0 when it never started an attempt
	// Retrying: another attempt follows in the same slot, under the same lock.
	Retrying bool
	// RetryAt is when that attempt is planned to start (with Retrying),
	// so that a status can say how long the slot waits.
	RetryAt time.Time
	// Detached: the run was handed over to its keeper and goes on; it is
	// neither recorded nor reported ended here.
	Detached bool
	// Usage is what the run cost (Usage.Measured false when it ran
	// outside a cgroup).
	Usage Usage
	// Recovered: a supervisor other than the one that started the run
	// records its end (its supervisor died; see package recovery): no
	// run of this supervisor's ended.
	Recovered bool
	// LogPath is the run's output log, for a writer that does not keep
	// it itself (a dead supervisor's run); "" otherwise. OutputTail is the
	// end of that log, for observers that did not see the run's output.
	LogPath, OutputTail string
	// Progress is the text of the run's newest beat (docs/heartbeats.md),
	// "" if none.
	Progress string
	// Amends: this restates the end of an attempt reported before with
	// Retrying, whose retries were cut short in the backoff (shutdown,
	// kill, a dead supervisor's recovered slot): Reason says why, and the
	// slot ends here. It is no further run: counters of runs leave it out.
	Amends bool
}

// Skip: a fire that did not run, with why and, for lock conflicts, who
// held the lock.
type Skip struct {
	Job    string
	RunID  string
	Slot   time.Time
	Time   time.Time
	Reason string
	Class  Class // Reason's class, a bounded label for metrics
	Holder *Holder
	Manual bool
	// ResourceWait is how long the fire waited for a resource slot
	// before it gave up (ClassResourceFull after on_full: wait).
	ResourceWait time.Duration
	// Resource is the full resource of a ClassResourceFull skip, so that
	// an observer need not read it out of Reason.
	Resource string
}

// Waiting: a fire holds its lock and waits for a slot of a full resource
// (on_full: wait). It ends with the run's Start, or a Skip.
type Waiting struct {
	Job      string
	RunID    string
	Slot     time.Time
	Time     time.Time // when the wait began
	Resource string    // the full resource it waits for
	Held     int       // its slots held by others when the wait began
	Size     int       // its slots
	Until    time.Time // when the wait gives up and the fire is skipped
}

// Class is the kind of reason a fire did not run, or of the cause a run
// ended in error, without the details a reason string carries (holders,
// times): a bounded label.
type Class string

// Classes of skips.
const (
	ClassLockHeld           Class = "lock_held"
	ClassSlotAlreadyRun     Class = "slot_already_run"
	ClassPaused             Class = "paused"
	ClassMissed             Class = "missed"
	ClassBackendUnreachable Class = "backend_unreachable" // also of an End: the lock could not be taken
	ClassQueued             Class = "queued"              // another fire already waits for the lock
	ClassDropped            Class = "dropped"             // a pending or queued fire ended by a reload or shutdown
	ClassDisabled           Class = "disabled"
	ClassResourceFull       Class = "resource_full" // a resource the job uses had no free slot
	ClassCalendar           Class = "calendar"      // the slot is on a day of a skip_on calendar, or of no only_on one
)

// Classes of ends (besides ClassBackendUnreachable).
const (
	ClassStartFailed Class = "start_failed" // no process was started
	ClassLockLost    Class = "lock_lost"    // the run's lease could not be kept
	ClassShutdown    Class = "shutdown"     // the supervisor's shutdown_grace ran out
	ClassKilled      Class = "killed"       // an operator killed it
	ClassReplaced    Class = "replaced"     // a newer fire replaced it
)

// Reload: a new jobs.yaml took effect (no Problems) or was refused.
type Reload struct {
	Time     time.Time
	Jobs     int
	Problems []string
	// Summary is the applied change in one line (plan.Summary): which
	// jobs changed and the slots they gain and lose over the next day.
	Summary string
}

// Stall: the job's next fire after After could not be computed (no
// instant within the schedule's search horizon matches). The job is not
// dropped: the scheduler tries again at Retry and lists it as
// unschedulable until a fire is found.
type Stall struct {
	Job   string
	Time  time.Time
	After time.Time
	Retry time.Time
}

// Slow: a run has been going for the job's warn_after and goes on.
type Slow struct {
	Job     string
	RunID   string
	Slot    time.Time
	Started time.Time
	Time    time.Time
	After   time.Duration // the job's warn_after, or the bound learned for warn_after: auto
	Attempt int
	// Reason says what the run passed and where the bound came from:
	// "running 22s; p99 of the last 50 runs is 11s".
	Reason string
}

// Fast: a run ended ok far sooner than the job's runs do (warn_fast).
// It follows the run's End, told by the same path.
type Fast struct {
	Job     string
	RunID   string
	Slot    time.Time
	Started time.Time
	Ended   time.Time
	Took    time.Duration
	Bound   time.Duration // an ok run under this is fast
	Attempt int
	Manual  bool
	// Reason: "ended ok in 0.2s; p5 of the last 50 runs is 9.1s".
	Reason string
}

// Beat: a run wrote to its heartbeat pipe (`cronvisor heartbeat`); at
// most one event per run per proc.BeatEvery, the newest beat of a burst.
type Beat struct {
	Job      string
	RunID    string
	Time     time.Time
	Progress string // "" for a bare beat
}

// HostLost: a peer closed a run of another host as Interrupted because
// that host was lost (its heartbeat stopped and the run's lock was let
// go; see package fleet). Only the peer that closed the run emits it, so
// each lost run is told once across the fleet. Its record is the shared
// history's, not this supervisor's: no run of this host ended.
type HostLost struct {
	Job     string
	RunID   string
	Host    string // the lost host, which ran it
	Slot    time.Time
	Started time.Time
	Ended   time.Time // the estimate recorded: the host's last heartbeat
	Time    time.Time // when this peer closed it
	Reason  string    // "host lost: ..."
	Attempt int
	Manual  bool
}

// JobName implements Event.
func (e Start) JobName() string { return e.Job }

// At implements Event.
func (e Start) At() time.Time { return e.Started }

// JobName implements Event.
func (e Waiting) JobName() string { return e.Job }

// At implements Event.
func (e Waiting) At() time.Time { return e.Time }

// JobName implements Event.
func (e Output) JobName() string { return e.Job }

// At implements Event.
func (e Output) At() time.Time { return e.Time }

// JobName implements Event.
func (e End) JobName() string { return e.Job }

// At implements Event.
func (e End) At() time.Time { return e.Ended }

// JobName implements Event.
func (e Skip) JobName() string { return e.Job }

// At implements Event.
func (e Skip) At() time.Time { return e.Time }

// JobName implements Event.
func (e Reload) JobName() string { return "" }

// At implements Event.
func (e Reload) At() time.Time { return e.Time }

// JobName implements Event.
func (e Stall) JobName() string { return e.Job }

// At implements Event.
func (e Stall) At() time.Time { return e.Time }

// JobName implements Event.
func (e Slow) JobName() string { return e.Job }

// At implements Event.
func (e Slow) At() time.Time { return e.Time }

// JobName implements Event.
func (e Fast) JobName() string { return e.Job }

// At implements Event.
func (e Fast) At() time.Time { return e.Ended }

// JobName implements Event.
func (e Beat) JobName() string { return e.Job }

// At implements Event.
func (e Beat) At() time.Time { return e.Time }

// JobName implements Event.
func (e HostLost) JobName() string { return e.Job }

// At implements Event.
func (e HostLost) At() time.Time { return e.Time }
