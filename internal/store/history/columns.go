package history

import (
	"database/sql"
	"strings"
	"time"

	"cronvisor/internal/base/run"
)

// Nullable is the part of a stored record that may be NULL, as this store
// and the fleet's shared one keep it: the times (Unix nanoseconds), the
// exit code, the holder and the run's cost (see UsageArgs). A scanner
// points its columns at the fields, then Fill completes the record.
type Nullable struct {
	Sched, Start, End, Exit, HolderPID, HolderSince sql.NullInt64
	HolderHost, HolderJob, HolderRun                sql.NullString
	CPUUser, CPUSystem, MemoryPeak                  sql.NullInt64
}

// Fill sets r's times, exit code, holder and usage (but its OOMKilled,
// a column that is never NULL) from n.
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
	if n.CPUUser.Valid || n.CPUSystem.Valid {
		r.Usage.Measured = true
		r.Usage.CPUUser = time.Duration(n.CPUUser.Int64) * time.Microsecond
		r.Usage.CPUSystem = time.Duration(n.CPUSystem.Int64) * time.Microsecond
		r.Usage.MemoryPeak = n.MemoryPeak.Int64
	}
}

// UsageArgs are how a run's cost is stored, here and in the shared
// history: the CPU times in microseconds (cgroup's cpu.stat unit) and
// the peak memory in bytes, NULL when not measured (memory_peak_bytes
// also when the memory controller was off), and whether the OOM killer
// killed a process of the run. In this order: cpu_user_us,
// cpu_system_us, memory_peak_bytes, oom_killed.
func UsageArgs(u run.Usage) []any {
	var user, system, peak any
	if u.Measured {
		user, system = u.CPUUser.Microseconds(), u.CPUSystem.Microseconds()
		if u.MemoryPeak > 0 {
			peak = u.MemoryPeak
		}
	}
	return []any{user, system, peak, u.OOMKilled}
}

// ResourceArgs are how a record's resource slots are stored, here and in
// the shared history: resources, space separated (empty for none), and
// resource_wait_ms, NULL when the fire neither took a slot nor waited
// (as the JSON form's null).
func ResourceArgs(r run.Record) []any {
	var wait any
	if r.ResourceWait > 0 || len(r.Resources) > 0 {
		wait = r.ResourceWait.Milliseconds()
	}
	return []any{strings.Join(r.Resources, " "), wait}
}

// FillResources sets r's slots and wait from their columns.
func FillResources(r *run.Record, resources string, waitMS sql.NullInt64) {
	r.Resources = strings.Fields(resources)
	if len(r.Resources) == 0 {
		r.Resources = nil
	}
	r.ResourceWait = time.Duration(waitMS.Int64) * time.Millisecond
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
