package ctl

import (
	"time"

	"cronvisor/internal/base/run"
)

// The events stream's wire types: one WireEvent per runner event and per
// change the service makes, in the socket's JSON (see wire.go).

// EventType names a WireEvent's kind.
type EventType string

// Event types: one per runner event, and the service's own (pauses,
// resync).
const (
	EventRunStarted  EventType = "run_started"
	EventRunOutput   EventType = "run_output"
	EventRunFinished EventType = "run_finished"
	EventRunSkipped  EventType = "run_skipped"
	// EventRunWaiting: a fire holds its lock and waits for a slot of a
	// full resource (Resource, Held of Size, giving up at Until).
	EventRunWaiting     EventType = "run_waiting"
	EventConfigReloaded EventType = "config_reloaded"
	// EventRunSlow: a run passed its job's warn_after and goes on.
	EventRunSlow EventType = "run_slow"
	// EventRunFast: a run ended ok in less than its job's warn_fast; it
	// follows the run's run_finished.
	EventRunFast EventType = "run_fast"
	// EventRunBeat: a run beat (docs/heartbeats.md), Progress its text;
	// at most a few a second per run.
	EventRunBeat EventType = "run_beat"
	// EventShuttingDown: the daemon stopped firing and waits for Jobs runs
	// to finish; the stream ends when they have.
	EventShuttingDown EventType = "shutting_down"
	// EventJobPaused and EventJobResumed: a client paused or resumed Job.
	EventJobPaused  EventType = "job_paused"
	EventJobResumed EventType = "job_resumed"
	// EventHostLost: a peer (this daemon) closed a run of a lost host
	// as interrupted (Host names the host); it ends that run as
	// run_finished would.
	EventHostLost EventType = "host_lost"
	// EventResync: events were dropped for this subscriber, which lagged;
	// what it kept of the daemon's state is to be read again.
	EventResync EventType = "resync"
)

// WireEvent is one runner event on the events stream. Which fields are set
// depends on Type; the rest are left out of the JSON.
type WireEvent struct {
	Type  EventType `json:"type"`
	Job   string    `json:"job,omitempty"`
	RunID string    `json:"run_id,omitempty"`
	Time  time.Time `json:"time"`
	Slot  time.Time `json:"slot,omitzero"`
	// StartedAt is the run's start, on run_finished (zero if it never
	// started), so a client can show the duration.
	StartedAt time.Time   `json:"started_at,omitzero"`
	Deadline  time.Time   `json:"deadline,omitzero"`
	Lock      string      `json:"lock,omitempty"`
	Manual    bool        `json:"manual,omitempty"`
	Attempt   int         `json:"attempt,omitempty"` // of the run in its slot, 1 for the first
	PID       int         `json:"pid,omitempty"`
	Outcome   run.Outcome `json:"outcome,omitempty"`
	// ExitCode is nil when the process did not exit by itself.
	ExitCode *int        `json:"exit_code,omitempty"`
	Reason   string      `json:"reason,omitempty"`
	Holder   *run.Holder `json:"holder,omitempty"`
	Stream   string      `json:"stream,omitempty"` // stdout or stderr
	Line     string      `json:"line,omitempty"`   // one or more lines joined by "\n" (run.Output)
	// Jobs and Problems are config_reloaded's: the job count in effect and,
	// when the new file was refused, why.
	Jobs     int      `json:"jobs,omitempty"`
	Problems []string `json:"problems,omitempty"`

	// Retrying is run_finished's: another attempt follows in the same slot,
	// so a failed outcome here is not yet the slot's.
	Retrying bool `json:"retrying,omitempty"`
	// Amends is run_finished's: it restates the end of an attempt reported
	// before (retries cut short in the backoff), no further run.
	Amends bool `json:"amends,omitempty"`
	// Usage is run_finished's: what the run cost, absent when it was not
	// measured.
	Usage *WireUsage `json:"usage,omitempty"`
	// RetryAt is run_finished's with Retrying: when the next attempt is
	// planned to start. MaxAttempts is the slot's attempts in all, on
	// run_started and run_finished of a job that retries.
	RetryAt     time.Time `json:"retry_at,omitzero"`
	MaxAttempts int       `json:"max_attempts,omitempty"`
	// Host is host_lost's: the lost host that ran the run.
	Host string `json:"host,omitempty"`
	// Progress is run_beat's: the beat's progress text; and
	// run_finished's: the run's last.
	Progress string `json:"progress,omitempty"`
	// Resources are run_started's: the resource slots the run holds
	// ("db/1"). Resource, Held, Size and Until are run_waiting's.
	Resources []string  `json:"resources,omitempty"`
	Resource  string    `json:"resource,omitempty"`
	Held      int       `json:"held,omitempty"`
	Size      int       `json:"size,omitempty"`
	Until     time.Time `json:"until,omitzero"`
}

// WireUsage is what a run cost, in the history record's units: CPU times
// in milliseconds, the peak memory in bytes (absent when unknown).
type WireUsage struct {
	CPUUserMS       int64 `json:"cpu_user_ms"`
	CPUSystemMS     int64 `json:"cpu_system_ms"`
	MemoryPeakBytes int64 `json:"memory_peak_bytes,omitempty"`
	OOMKilled       bool  `json:"oom_killed,omitempty"`
}

// WireUsageOf is u's wire form, nil when u was not measured.
func WireUsageOf(u run.Usage) *WireUsage {
	if !u.Measured {
		return nil
	}
	return &WireUsage{CPUUserMS: u.CPUUser.Milliseconds(), CPUSystemMS: u.CPUSystem.Milliseconds(),
		MemoryPeakBytes: u.MemoryPeak, OOMKilled: u.OOMKilled}
}

// Usage is w as a run.Usage: not measured when w is nil.
func (w *WireUsage) Usage() run.Usage {
	if w == nil {
		return run.Usage{}
	}
	return run.Usage{Measured: true, CPUUser: time.Duration(w.CPUUserMS) * time.Millisecond,
		CPUSystem: time.Duration(w.CPUSystemMS) * time.Millisecond, MemoryPeak: w.MemoryPeakBytes, OOMKilled: w.OOMKilled}
}
