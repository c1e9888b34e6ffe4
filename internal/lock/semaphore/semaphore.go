// Package semaphore holds named counting semaphores (jobs.yaml's
// resources:) on the lock backend in force: a resource of N slots is N
// locks of a namespace of their own, so that each slot is held, recorded,
// handed to a keeper and freed when its holder dies exactly as a job's
// lock is. Slot K of NAME (K from 0; "NAME/K" to people and runs) is the
// lock NAME.K: for the file backend the file
// STATE_DIR/resources/NAME.K.lock (0600, in a 0700 directory beside
// STATE_DIR/locks, never deleted); for Redis and SQL the lock NAME.K under
// the job locks' prefix ("cronvisor:" by default) without its final ':'
// and followed by ".resource:" — Redis keys
// "cronvisor.resource:lock:db.0" and the like, SQL lock names
// "cronvisor.resource:db.0". The ':' keeps slots apart from the job locks,
// whose names after the prefix never hold one, and out of their List. A run takes its lock first,
// then its slots, resources in name order and slots in index order,
// without ever waiting while it holds one (a full resource releases what
// the attempt took), so two jobs can never deadlock.
package semaphore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
)

// ErrFull means a resource had no free slot. Errors that match it are
// *FullError.
var ErrFull = errors.New("resource full")

// FullError names the full resource and who holds its slots.
type FullError struct {
	Resource string
	Size     int
	Holders  []run.Holder // the holders of its held slots, by slot
	Waited   time.Duration
}

// Error is the skip's reason: "resource db full: held by export_a on
// host-b since 10:02:03, export_b on host-c since 10:04:00".
func (e *FullError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "resource %s full", e.Resource)
	if e.Waited > 0 {
		fmt.Fprintf(&b, " after waiting %s", e.Waited.Round(time.Millisecond))
	}
	for i, h := range e.Holders {
		if i == 0 {
			b.WriteString(": held by ")
		} else {
			b.WriteString(", ")
		}
		switch {
		case h.Job != "":
			fmt.Fprintf(&b, "%s on %s since %s", h.Job, h.Host, h.Since.Local().Format(time.TimeOnly))
		case h.Cmdline != "":
			fmt.Fprintf(&b, "pid %d outside cronvisor (%s)", h.PID, h.Cmdline)
		default:
			b.WriteString("a holder outside cronvisor")
		}
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrFull) true.
func (e *FullError) Unwrap() error { return ErrFull }

// Request asks for the slots of one run.
type Request struct {
	// Holder is who takes them (the run: job, run id, host, pid, since).
	Holder run.Holder
	// Uses are the resources and how many slots of each, in any order:
	// Take sorts them by name.
	Uses []Use
}

// Use is Weight slots of Resource.
type Use struct {
	Resource string
	Weight   int
}

// Held is the slots of one run.
type Held struct {
	// Slots names them, "db/0", in the order taken.
	Slots []string
	// Grants are their leases, in the same order: a file grant's File, an
	// SQL grant's Session go to the run's processes (fd 5 on), a Redis
	// grant's Handoff to its keeper, as a job's lock's do.
	Grants []lock.Grant
}

// Files are the descriptors the run's processes hold so that its slots
// stay held as long as any of them lives (the slot files, or the SQL
// slots' session sockets), in slot order.
func (h *Held) Files() []*os.File {
	var fs []*os.File
	for _, g := range h.Grants {
		switch {
		case g.File != nil:
			fs = append(fs, g.File)
		case g.Session != nil:
			fs = append(fs, g.Session)
		}
	}
	return fs
}

// Waiter is a fire waiting for a slot (on_full: wait) in this process.
type Waiter struct {
	run.Holder
	Resource string
	Until    time.Time
}

// Resource is one resource's state: its slots (index = slot number; a
// free one's Record is its last holder, if any) and the fires of this
// process waiting for it.
type Resource struct {
	Name    string
	Size    int
	Slots   []lock.Status
	Waiters []Waiter
}

// HeldCount is how many of its slots are held.
func (r Resource) HeldCount() int {
	n := 0
	for _, s := range r.Slots {
		if s.Held {
			n++
		}
	}
	return n
}

// Semaphores takes, lists and waits for slots: the port the runner, the
// daemon and the commands use.
type Semaphores interface {
	// Take takes every slot req asks for, or none: a full resource
	// releases what it took and returns a *FullError naming its holders.
	Take(ctx context.Context, req Request) (*Held, error)
	// Wait is Take retried until until: in the order the fires of this
	// process began to wait for the resource, polling for holders
	// elsewhere. A *FullError (Waited set) when until passed.
	Wait(ctx context.Context, req Request, until time.Time) (*Held, error)
	// Release lets go of h's slots; releasing twice is a no-op.
	Release(h *Held) error
	// SetRun names the started run in each slot's record: its run id
	// (a retry's, which kept the slots) and its process.
	SetRun(h *Held, runID string, pid int) error
	// List is every declared resource, sorted by name.
	List(ctx context.Context) ([]Resource, error)
}
