// Package run is the vocabulary every layer shares about a fire: its run
// id, its outcome and who held its lock. It is a leaf: it imports nothing
// of cronvisor and does no I/O, so lock, runner, history, ctl and ui can
// all speak of the same values without converting them.
package run

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"time"
)

// EnvID is the variable that carries a run's id into its processes. Every
// process of a run inherits it, which is how survivors of a run are
// recognised (see Tag).
const EnvID = "CRONVISOR_RUN_ID"

// NewID returns a unique, time-sortable run id.
func NewID(t time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return t.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// Tag is the environment entry that marks the processes of run id.
func Tag(id string) string { return EnvID + "=" + id }

// Outcome is how a fire ended, as in the contract's history records, or
// Running while it has not.
type Outcome string

// The contract's outcomes, and Running for a record still in flight.
const (
	OK          Outcome = "ok"
	Failed      Outcome = "failed"
	Timeout     Outcome = "timeout"
	Skipped     Outcome = "skipped"
	Replaced    Outcome = "replaced"
	Interrupted Outcome = "interrupted"
	Error       Outcome = "error"
	Running     Outcome = "running"
)

// Finals lists the contract's final outcomes, in the contract's order.
func Finals() []Outcome { return []Outcome{OK, Failed, Timeout, Skipped, Replaced, Interrupted, Error} }

// Final reports whether o is one of the contract's final outcomes (not
// Running, not an unknown word).
func (o Outcome) Final() bool { return slices.Contains(Finals(), o) }

// Holder is who holds (or held) a lock: a cronvisor run (PID, Host, Job,
// RunID, Since) or, with Foreign set, a program outside cronvisor that PID,
// Cmdline and Since describe. Its JSON is the contract's holder object
// (`{pid, host, job, run_id}` and since); foreign and cmdline are left out
// for cronvisor's holders, so the lock file's record keeps its fields.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Job     string    `json:"job"`
	RunID   string    `json:"run_id"`
	Since   time.Time `json:"since,omitzero"`
	Foreign bool      `json:"foreign,omitempty"`
	Cmdline string    `json:"cmdline,omitempty"` // NULs turned to spaces
}

// String is the holder as skip reasons, logs and status show it:
// "pid P@host (job J, run R) since T", or "pid P (outside cronvisor: CMD)".
func (h Holder) String() string {
	if h.Foreign {
		s := fmt.Sprintf("pid %d (outside cronvisor", h.PID)
		if h.Cmdline != "" {
			s += ": " + h.Cmdline
		}
		return s + ")"
	}
	s := fmt.Sprintf("pid %d@%s", h.PID, h.Host)
	if h.Job != "" {
		s += fmt.Sprintf(" (job %s, run %s)", h.Job, h.RunID)
	}
	if !h.Since.IsZero() {
		s += " since " + h.Since.Format(time.RFC3339)
	}
	return s
}
