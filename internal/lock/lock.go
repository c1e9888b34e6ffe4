// Package lock keeps jobs from overlapping: one holder per lock name, a
// record of who holds it, and a per-job slot cursor so that a job runs at
// most once per scheduled slot across every supervisor sharing the lock.
//
// The file backend (lock/file) takes flock(2) on STATE_DIR/locks/NAME.lock,
// so any other program using `flock -n` on the same file is respected and
// the lock outlives a supervisor whose run's processes still hold the file.
// The Redis backend (lock/redis) serves several hosts: a leased SET NX PX
// key renewed while the run lives, a slot cursor and a fencing token taken
// atomically with it; its doc comment says what it does and does not
// guarantee. The SQL backends (lock/sql: MySQL, PostgreSQL) hold the
// server's session lock on one connection pinned to each lease, with
// holder records and slot claims as rows.
package lock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"cronvisor/internal/base/run"
)

// ErrLocked means another holder has the lock. Errors from Acquire that
// match it are *HeldError and name the holder.
var ErrLocked = errors.New("lock held")

// ErrSlotDone means the lock was free but this job's slot has already been
// run under it, by this supervisor or another one. Errors that match it are
// *SlotDoneError.
var ErrSlotDone = errors.New("slot already run")

// ErrBadName means a lock name that cannot be used as a file name.
var ErrBadName = errors.New("invalid lock name")

// ErrUnsafeFile means the lock path is a symbolic link or not a regular
// file; cronvisor refuses to lock or write through it.
var ErrUnsafeFile = errors.New("unsafe lock file")

// ErrReleased means the lease was already released.
var ErrReleased = errors.New("lease released")

// ErrUnavailable means the lock backend could not be reached (a network
// backend such as Redis); the fire is skipped, never run unguarded.
var ErrUnavailable = errors.New("lock backend unavailable")

// Record is a lock's record: who holds it (run.Holder) and what the lock
// keeps beside that. Its JSON form is the one-line record in the lock file;
// the field names are part of the outside contract.
type Record struct {
	// Holder is the run holding the lock. Foreign is set by Inspect for
	// holders outside cronvisor (flock(1) and the like), never written.
	run.Holder
	Slot          time.Time `json:"slot"`
	SupervisorPID int       `json:"supervisor_pid"`
	// Slots is the last slot each job ran under this lock, so that jobs
	// sharing a lock each keep their own slot cursor.
	Slots map[string]time.Time `json:"slots,omitempty"`
	// InFlight is true from the acquisition until the holder's Release
	// (file backend; ReleaseInFlight leaves it set): a record that still
	// says so while its supervisor is dead names a run that supervisor
	// never saw recorded to its end, which the next supervisor records
	// (see package recovery).
	InFlight bool `json:"in_flight,omitempty"`
	// RetryAt is set while the slot waits for its next attempt (retries):
	// the run named is the last attempt, already recorded, and this is
	// when the next one is due. A dead supervisor's record that says so
	// tells the next one that the slot's retries were cut short.
	RetryAt time.Time `json:"retry_at,omitzero"`
}

// RetryMarker is a Lease whose record can say that the slot waits for a
// retry (the file backend's). SetRetry(zero) clears it.
type RetryMarker interface {
	SetRetry(at time.Time) error
}

// clone copies h with its own Slots map, so a caller cannot change a
// lease's record behind its back.
func (h Record) clone() Record {
	if h.Slots != nil {
		m := make(map[string]time.Time, len(h.Slots))
		for k, v := range h.Slots {
			m[k] = v
		}
		h.Slots = m
	}
	return h
}

// HeldError is returned by Acquire when another holder has the lock.
type HeldError struct {
	Lock   string
	Record Record
}

// Error names the lock and its holder: pid, host, job, run id and since,
// or pid and command line for a holder outside cronvisor.
func (e *HeldError) Error() string {
	return fmt.Sprintf("lock %q held by %s", e.Lock, e.Record)
}

// Unwrap makes errors.Is(err, ErrLocked) true.
func (e *HeldError) Unwrap() error { return ErrLocked }

// SlotDoneError is returned by Acquire when the request's slot was already
// run under the lock. Holder is the lock's last record: the run of this
// slot when Holder.Job is the requesting job (the common case), otherwise a
// later run of another job sharing the lock.
type SlotDoneError struct {
	Lock   string
	Record Record
	// Outcome is the slot's outcome in the backend's ledger (SQL):
	// "running" from the claim until the run's end is set (see
	// OutcomeSetter), "missed" for a slot every host was down for; empty
	// where the backend keeps none.
	Outcome string
}

// Error names the lock and the record of its last run.
func (e *SlotDoneError) Error() string {
	s := fmt.Sprintf("lock %q: %s (last record: %s", e.Lock, ErrSlotDone, e.Record)
	if e.Outcome != "" {
		s += ", outcome " + e.Outcome
	}
	return s + ")"
}

// Unwrap makes errors.Is(err, ErrSlotDone) true.
func (e *SlotDoneError) Unwrap() error { return ErrSlotDone }

// Request asks for a lock.
type Request struct {
	Name string // lock name, [A-Za-z0-9_.-]+
	// Record is the record to write. The caller fills Job, RunID, Slot,
	// Since, PID (the supervisor's pid until the run starts) and
	// SupervisorPID; Host defaults to the machine's name, Since to now and
	// the pids to this process. Slots, InFlight, RetryAt, Foreign and
	// Cmdline are ignored: the backend sets what it keeps of them.
	Record Record
	// CheckSlot is set by scheduled fires: Acquire refuses with
	// *SlotDoneError when the job already ran this slot or a later one, and
	// otherwise advances the job's cursor. Manual runs leave it false and
	// do not move the cursor.
	CheckSlot bool
}

// Status describes one lock.
type Status struct {
	Name string
	Held bool
	// Record is who holds the lock when Held; for a free lock it is the
	// last record, if any.
	Record Record
}

// Locker takes and inspects locks.
type Locker interface {
	// Acquire takes the lock without waiting for a holder: if it is held,
	// it returns a *HeldError (ErrLocked) at once, or within a few
	// milliseconds when the holder looks like it is on its way out.
	Acquire(ctx context.Context, req Request) (Grant, error)
	// Inspect reports one lock without disturbing its holder.
	Inspect(ctx context.Context, name string) (Status, error)
	// List reports every known lock, sorted by name.
	List(ctx context.Context) ([]Status, error)
}

// Lease is a held lock.
type Lease interface {
	// Record returns the record as last written.
	Record() Record
	// SetPID rewrites the record with the run's process id once started,
	// and makes a new slot cursor durable (see file.Locker.Acquire).
	SetPID(pid int) error
	// SetRun rewrites the record for a retry of the same slot, which kept
	// the lock: its run id and, started, its pid.
	SetRun(runID string, pid int) error
	// Release gives the lock up; calling it again is a no-op. For files it
	// only closes the supervisor's descriptor: the lock stays held while a
	// run's process that inherited Grant.File lives.
	Release() error
	// ReleaseInFlight is Release for a run whose end is not durably
	// recorded yet (history is failing): the record keeps saying the run
	// is in flight, so that if this supervisor dies before its end is
	// written, the next one records the run from it (package recovery).
	// Backends without in-flight records release as Release does.
	ReleaseInFlight() error
}

// OutcomeSetter is a Lease whose backend keeps each claimed slot's
// outcome (the SQL backends' slot ledger, cronvisor_slots). The
// supervisor calls it with the run's end just before Release, once the
// end is recorded; runID is the attempt that ended the slot (a retry's
// differs from the one that claimed it). A lease that claimed no slot (a
// manual run) ignores it.
type OutcomeSetter interface {
	SetOutcome(outcome run.Outcome, runID string) error
}

// SlotKey names one job's slot cursor under a lock.
type SlotKey struct{ Lock, Job string }

// MissedClaim is the ledger row of slots that passed while no host ran:
// from First through Through (the same slot when one), recorded by RunID
// (the id of the `missed` skip) of Host (default: the machine's name).
type MissedClaim struct {
	Lock, Job      string
	First, Through time.Time
	RunID, Host    string
}

// SlotLedger is a Locker whose slot claims every host sharing its server
// sees (the SQL backends' cronvisor_slots): the start-up of a supervisor
// takes each job's last slot from it and claims the slots missed while
// every host was down, so that one host records them.
type SlotLedger interface {
	// LastSlots is the newest slot claimed (run, or covered by a missed
	// claim) for each of keys; keys without one are absent. One query.
	LastSlots(ctx context.Context, keys []SlotKey) (map[SlotKey]time.Time, error)
	// ClaimMissed claims the slots of m for a `missed` record. won is
	// false when the job's cursor is already at or past m.First (another
	// host claimed them, or ran a later slot); by then names that claim.
	ClaimMissed(ctx context.Context, m MissedClaim) (won bool, by Record, err error)
}

// Grant is what Acquire gives: the lease, and what its backend offers
// beside it. A zero field is something the backend does not offer.
type Grant struct {
	Lease
	// File is the locked open file (file backend), to pass to the run's
	// processes (exec.Cmd.ExtraFiles) so the lock stays held while any of
	// them lives, also if the supervisor dies. It is open read-only: the
	// lease writes the record through a descriptor of its own that is
	// never passed on, so no process of a run can rewrite the record. The
	// lease owns it: do not close it.
	File *os.File
	// Lost is closed when the lease is lost behind the holder's back (a
	// Redis lease that could not be renewed). Nil: never lost (a flock
	// cannot be taken away).
	Lost <-chan struct{}
	// Tethered is set for leases that nothing of the run holds (Redis,
	// SQL): a dead supervisor's lease ends while its run's processes may
	// go on, so the run must end first. MinLifeLeft is then the least time
	// the lease has left before it can expire, at any moment while it is
	// not lost (0 for a lock freed with its session): a run gone within
	// that long of its supervisor's death never outlives it.
	Tethered    bool
	MinLifeLeft time.Duration
	// Session, for a lock its server session holds (SQL), is this
	// process's descriptor of that session's connection: a run's keeper
	// that holds it keeps the session, and so the lock, alive as long as
	// the run, whatever becomes of its supervisor. The lease owns it.
	// Nil where it could not be found.
	Session *os.File
	// Handoff, for a lease that must be renewed (Redis), describes it
	// for its Backend.Keep (backends.KeepLease), which a run's keeper
	// calls to keep renewing it once the supervisor is dead. It holds the backend's credentials. Nil:
	// none (the keeper ends the run at once instead).
	Handoff []byte
	// FencingToken grows with every acquisition of the lock (Redis): a
	// store that remembers the highest token it has seen can refuse
	// writes from a holder whose lease has already passed to another.
	FencingToken int64
	// Preceded is set by backends that read the lock's record when they
	// take it (file backend): every holder rewrites the record, so a
	// previous holder that is a run of this process proves that nobody
	// else held the lock since. Previous is that record, nil when the
	// lock had none.
	Preceded bool
	Previous *Record
	// RecordsInFlight is set by backends whose record says the run is in
	// flight until its Release (file backend): if the supervisor dies, the
	// record is still there, and the recovery of dead supervisors' runs
	// records the run from it, whatever history had of it.
	RecordsInFlight bool
}
