package history

import (
	"database/sql"
	"time"

	"cronvisor/run"
)

// Nullable is the part of a stored record that may be NULL, as this store
// and the fleet's shared one keep it: the times (Unix nanoseconds), the
// exit code and the holder. A scanner points its columns at the fields,
// then Fill completes the record.
type Nullable struct {
	Sched, Start, End, Exit, HolderPID, HolderSince sql.NullInt64
	HolderHost, HolderJob, HolderRun                sql.NullString
}

// Fill sets r's times, exit code and holder from n.
func (n *Nullable) Fill(r *run.Record) {
	r.ScheduledAt, r.StartedAt, r.EndedAt = FromNanos(n.Sched), FromNanos(n.Start), FromNanos(n.End)
	if n.Exit.Valid {
		c := int(n.Exit.Int64)
		r.ExitCode = &c
	}
	if n.HolderPID.Valid {
		r.Holder = &run.Holder{PID: int(n.HolderPID.Int64), Host: n.HolderHost.String, Job: n.HolderJob.String,
			RunID: n.HolderRun.String, Since: FromNanos(n.HolderSince)}
	}
}

// Nanos is how a time is stored: Unix nanoseconds, NULL when zero.
func Nanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

// FromNanos reads a stored time in the machine's zone, as an operator
// reading history expects; NULL is the zero time.
func FromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).Local()
}
