// Package lock keeps jobs from overlapping: one holder per lock name, a
// record of who holds it, and a per-job slot cursor so that a job runs at
// most once per scheduled slot across every supervisor sharing the lock.
//
// The file backend (FileLocker) takes flock(2) on STATE_DIR/locks/NAME.lock,
// so any other program using `flock -n` on the same file is respected and
// the lock outlives a supervisor whose run's processes still hold the file.
// The Redis backend (RedisLocker) serves several hosts: a leased SET NX PX
// key renewed while the run lives, a slot cursor and a fencing token taken
// atomically with it; its doc comment says what it does and does not
// guarantee. The SQL backends (MySQLLocker, PostgresLocker) hold the
// server's session lock on one connection pinned to each lease, with
// holder records and slot claims as rows (see NewMySQLLocker).
package lock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
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

// Holder is who holds a lock. Its JSON form is the one-line record in the
// lock file; the field names are part of the outside contract.
type Holder struct {
	PID           int       `json:"pid"`
	Host          string    `json:"host"`
	Job           string    `json:"job"`
	RunID         string    `json:"run_id"`
	Slot          time.Time `json:"slot"`
	Since         time.Time `json:"since"`
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

	// Foreign is set by Inspect for holders outside cronvisor (flock(1)
	// and the like); PID, Cmdline and Since then describe that process.
	Foreign bool `json:"-"`
	// Cmdline is the foreign holder's command line, NULs turned to spaces.
	Cmdline string `json:"-"`
}

// String describes the holder for messages and logs.
func (h Holder) String() string {
	if h.Foreign {
		s := fmt.Sprintf("pid %d outside cronvisor", h.PID)
		if h.Cmdline != "" {
			s += fmt.Sprintf(" (%s)", h.Cmdline)
		}
		return s
	}
	s := fmt.Sprintf("pid %d on %s (job %s, run %s", h.PID, h.Host, h.Job, h.RunID)
	if !h.Since.IsZero() {
		s += ", since " + h.Since.Format(time.RFC3339)
	}
	return s + ")"
}

// clone copies h with its own Slots map, so a caller cannot change a
// lease's record behind its back.
func (h Holder) clone() Holder {
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
	Holder Holder
}

// Error names the lock and its holder: pid, host, job, run id and since,
// or pid and command line for a holder outside cronvisor.
func (e *HeldError) Error() string {
	return fmt.Sprintf("lock %q held by %s", e.Lock, e.Holder)
}

// Unwrap makes errors.Is(err, ErrLocked) true.
func (e *HeldError) Unwrap() error { return ErrLocked }

// SlotDoneError is returned by Acquire when the request's slot was already
// run under the lock. Holder is the lock's last record: the run of this
// slot when Holder.Job is the requesting job (the common case), otherwise a
// later run of another job sharing the lock.
type SlotDoneError struct {
	Lock   string
	Holder Holder
}

// Error names the lock and the record of its last run.
func (e *SlotDoneError) Error() string {
	return fmt.Sprintf("lock %q: %s (last record: %s)", e.Lock, ErrSlotDone, e.Holder)
}

// Unwrap makes errors.Is(err, ErrSlotDone) true.
func (e *SlotDoneError) Unwrap() error { return ErrSlotDone }

// Request asks for a lock.
type Request struct {
	Name string // lock name, [A-Za-z0-9_.-]+
	// Holder is the record to write. The caller fills Job, RunID, Slot,
	// Since, PID (the supervisor's pid until the run starts) and
	// SupervisorPID; Host defaults to the machine's name, Since to now and
	// the pids to this process. Slots, InFlight, Foreign and Cmdline are
	// ignored.
	Holder Holder
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
	// Holder is who holds the lock when Held; for a free lock it is the
	// last record, if any.
	Holder Holder
}

// Locker takes and inspects locks.
type Locker interface {
	// Acquire takes the lock without waiting for a holder: if it is held,
	// it returns a *HeldError (ErrLocked) at once, or within a few
	// milliseconds when the holder looks like it is on its way out.
	Acquire(ctx context.Context, req Request) (Lease, error)
	// Inspect reports one lock without disturbing its holder.
	Inspect(ctx context.Context, name string) (Status, error)
	// List reports every known lock, sorted by name.
	List(ctx context.Context) ([]Status, error)
}

// Lease is a held lock.
type Lease interface {
	// Holder returns the record as last written.
	Holder() Holder
	// SetPID rewrites the record with the run's process id once started,
	// and makes a new slot cursor durable (see FileLocker.Acquire).
	SetPID(pid int) error
	// File is the locked open file, to pass to the run's processes
	// (exec.Cmd.ExtraFiles) so the lock stays held while any of them
	// lives, also if the supervisor dies. The lease owns it: do not close
	// it. Nil for backends without a file.
	File() *os.File
	// Lost is closed when the lease is lost behind the holder's back
	// (a Redis lease that could not be renewed). File leases are never
	// lost.
	Lost() <-chan struct{}
	// Release gives the lock up; calling it again is a no-op. For files it
	// only closes the supervisor's descriptor: the lock stays held while a
	// run's process that inherited File() lives.
	Release() error
	// ReleaseInFlight is Release for a run whose end is not durably
	// recorded yet (history is failing): the record keeps saying the run
	// is in flight, so that if this supervisor dies before its end is
	// written, the next one records the run from it (package recovery).
	// Backends without in-flight records release as Release does.
	ReleaseInFlight() error
}

// Tethered is implemented by leases that nothing of the run holds (Redis):
// a dead supervisor's lease expires while its run's processes may go on,
// so the run must end first. MinLifeLeft is the least time the lease has
// left before it can expire, at any moment while it is not lost: a run
// gone within that long of its supervisor's death never outlives it.
type Tethered interface {
	MinLifeLeft() time.Duration
}

// Preceded is implemented by leases that read the record of the lock's
// previous holder when they took it (file leases): every holder rewrites
// the record, so a previous holder that is a run of this process proves
// that nobody else held the lock since.
type Preceded interface {
	// PreviousHolder is the record found when the lock was taken; false
	// when the file had none.
	PreviousHolder() (Holder, bool)
}
