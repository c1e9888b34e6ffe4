package run

import (
	"encoding/json"
	"fmt"
	"time"
)

// Record is one row of history: a run (open while Outcome is "running") or a
// fire that did not run. Zero times mean "not applicable".
type Record struct {
	Job         string
	RunID       string
	Outcome     Outcome
	ScheduledAt time.Time // the slot, before jitter
	StartedAt   time.Time
	EndedAt     time.Time
	ExitCode    *int    // nil when unknown or not applicable
	Reason      string  // why skipped, failed to start or interrupted
	Holder      *Holder // who held the lock, for skips
	LogPath     string  // the run's output log, "" if none
	// Host, SupervisorPID and PID say who ran it, so that the next supervisor
	// can tell the runs of a dead one from those of a live one.
	Host          string
	SupervisorPID int
	PID           int
	Manual        bool // started by `cronvisor run` or run-now, not by the schedule
	Attempt       int  // 1 for the first attempt in its slot (0 reads as 1)
	Usage         Usage
	// Progress is the text of the run's last heartbeat
	// (docs/heartbeats.md), "" if none.
	Progress string
	// Resources are the resource slots the run held ("db/1"), and
	// ResourceWait how long it (or a skipped fire) waited for them.
	Resources    []string
	ResourceWait time.Duration
}

// DurationMS is the run time in milliseconds, 0 unless both StartedAt and
// EndedAt are set.
func (r Record) DurationMS() int64 {
	if r.StartedAt.IsZero() || r.EndedAt.IsZero() {
		return 0
	}
	return r.EndedAt.Sub(r.StartedAt).Milliseconds()
}

// jsonRecord is the contract's history record; the field order is the
// contract's, so `history --json` reads the same as the documentation.
type jsonRecord struct {
	Job         string  `json:"job"`
	RunID       string  `json:"run_id"`
	Outcome     Outcome `json:"outcome"`
	ScheduledAt string  `json:"scheduled_at"`
	StartedAt   string  `json:"started_at"`
	EndedAt     string  `json:"ended_at"`
	DurationMS  int64   `json:"duration_ms"`
	ExitCode    *int    `json:"exit_code"`
	Reason      string  `json:"reason"`
	Holder      *Holder `json:"holder"`
	LogPath     string  `json:"log_path"`
	Host        string  `json:"host"`
	Manual      bool    `json:"manual"`
	Attempt     int     `json:"attempt"`
	// What the run cost: null when it was not measured (no cgroup, or
	// no run), memory_peak_bytes also when the memory controller is off.
	CPUUserMS   *int64 `json:"cpu_user_ms"`
	CPUSystemMS *int64 `json:"cpu_system_ms"`
	MemoryPeak  *int64 `json:"memory_peak_bytes"`
	OOMKilled   bool   `json:"oom_killed"`
	Progress    string `json:"progress"`
	// The resource slots the run held ([] for none) and how long it, or
	// a fire skipped after on_full: wait, waited for them (null: it
	// neither took a slot nor waited).
	Resources      []string `json:"resources"`
	ResourceWaitMS *int64   `json:"resource_wait_ms"`
}

// MarshalJSON writes the contract's history record: times as RFC3339Nano or
// "" when zero, exit_code and holder as null when absent, the run's cost
// (cpu_user_ms, cpu_system_ms, memory_peak_bytes) as null when unknown.
func (r Record) MarshalJSON() ([]byte, error) {
	j := jsonRecord{
		Job: r.Job, RunID: r.RunID, Outcome: r.Outcome,
		ScheduledAt: fmtTime(r.ScheduledAt),
		StartedAt:   fmtTime(r.StartedAt),
		EndedAt:     fmtTime(r.EndedAt),
		DurationMS:  r.DurationMS(),
		ExitCode:    r.ExitCode,
		Reason:      r.Reason,
		LogPath:     r.LogPath,
		Host:        r.Host,
		Manual:      r.Manual,
		Attempt:     max(r.Attempt, 1),
		OOMKilled:   r.Usage.OOMKilled,
		Progress:    r.Progress,
		Resources:   r.Resources,
	}
	if j.Resources == nil {
		j.Resources = []string{}
	}
	if r.ResourceWait > 0 || len(r.Resources) > 0 {
		j.ResourceWaitMS = ptr(r.ResourceWait.Milliseconds())
	}
	if u := r.Usage; u.Measured {
		j.CPUUserMS, j.CPUSystemMS = ptr(u.CPUUser.Milliseconds()), ptr(u.CPUSystem.Milliseconds())
		if u.MemoryPeak > 0 {
			j.MemoryPeak = ptr(u.MemoryPeak)
		}
	}
	if h := r.Holder; h != nil {
		// Only the contract's fields: a foreign holder's command line is
		// not kept in history.
		j.Holder = &Holder{PID: h.PID, Host: h.Host, Job: h.Job, RunID: h.RunID, Since: h.Since}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes, so that a client of the
// control socket gets Records back. SupervisorPID and PID are not part of the
// JSON form and stay zero.
func (r *Record) UnmarshalJSON(b []byte) error {
	var j jsonRecord
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	out := Record{Job: j.Job, RunID: j.RunID, Outcome: j.Outcome, ExitCode: j.ExitCode,
		Reason: j.Reason, LogPath: j.LogPath, Host: j.Host, Manual: j.Manual, Attempt: j.Attempt, Progress: j.Progress,
		ResourceWait: time.Duration(deref(j.ResourceWaitMS)) * time.Millisecond}
	if len(j.Resources) > 0 {
		out.Resources = j.Resources
	}
	var err error
	times := []struct {
		dst *time.Time
		src string
	}{{&out.ScheduledAt, j.ScheduledAt}, {&out.StartedAt, j.StartedAt}, {&out.EndedAt, j.EndedAt}}
	out.Holder = j.Holder
	out.Usage = j.usage()
	for _, t := range times {
		if *t.dst, err = parseTime(t.src); err != nil {
			return err
		}
	}
	*r = out
	return nil
}

// usage is the Usage of j's cost fields: measured when either CPU time
// is there, to the millisecond.
func (j *jsonRecord) usage() Usage {
	u := Usage{OOMKilled: j.OOMKilled}
	if j.CPUUserMS == nil && j.CPUSystemMS == nil {
		return u
	}
	u.Measured = true
	u.CPUUser = time.Duration(deref(j.CPUUserMS)) * time.Millisecond
	u.CPUSystem = time.Duration(deref(j.CPUSystemMS)) * time.Millisecond
	u.MemoryPeak = deref(j.MemoryPeak)
	return u
}

func ptr(n int64) *int64 { return &n }

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("history record: bad time %q: %w", s, err)
	}
	return t, nil
}
