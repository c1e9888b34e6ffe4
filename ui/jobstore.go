package ui

import (
	"strings"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// jobRow is what the store keeps of a job: the fields the table shows
// and sorts by inline, with their repeated strings (schedule, timezone,
// lock, state, outcome) shared, times as Unix nanoseconds (0: none; the
// views show times in the console's zone whatever zone they came in),
// and the fields most idle jobs leave zero behind one pointer. A console
// attached to 10,000 jobs holds 10,000 of these for as long as it runs,
// so a row is a fraction of a ctl.JobStatus.
type jobRow struct {
	name, schedule, timezone, lock string
	state                          ctl.JobState
	last                           run.Outcome
	nextRun, lastEndedAt, since    int64 // since: the counters'
	runs, skips, failures          int
	paused, enabled                bool
	more                           *jobMore // nil when all its fields are zero
	learned                        *learned // nil without successful runs
}

// nanos is t as a row keeps it.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// unixTime is a row's time back as a time.Time.
func unixTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// jobMore is the rest of a job's status that the console shows: the
// current run, its holder, who paused the job, why it cannot be scheduled.
// LastStartedAt and History are not kept: no view shows the first, and the
// second is the same for every job (store.note).
type jobMore struct {
	PausedBy            *ctl.PauseInfo
	RunID               string
	PID                 int
	StartedAt, Deadline time.Time
	Holder              *run.Holder
	Problem             string
	LastNotification    string
	FailedPing          string
	Attempt             int
	Slow, Adopted       bool
	SupervisorPID       int
	MaxAttempts         int
	RetryAt             time.Time
	Progress            string // the current run's newest beat's
	LastBeatAt          time.Time
	// Resources are the current run's slots, space separated (a string
	// keeps jobMore comparable); WaitingFor a fire's wait for one.
	Resources  string
	WaitingFor *ctl.Waiting
}

// interner shares equal strings: 10,000 jobs on one schedule keep one
// copy of it, not the 10,000 the decoder made.
type interner map[string]string

func (in interner) str(s string) string {
	if s == "" {
		return ""
	}
	if t, ok := in[s]; ok {
		return t
	}
	in[s] = s
	return s
}

// compact is j as the store keeps it, named by name (j.Name's bytes
// where the store already has them).
func (in interner) compact(j ctl.JobStatus, name string) jobRow {
	r := jobRow{name: name, schedule: in.str(j.Schedule), timezone: in.str(j.Timezone),
		lock: j.Lock, state: ctl.JobState(in.str(string(j.State))), last: run.Outcome(in.str(string(j.LastOutcome))),
		nextRun: nanos(j.NextRun), lastEndedAt: nanos(j.LastEndedAt), since: nanos(j.Counts.Since),
		runs: j.Counts.Runs, skips: j.Counts.Skips, failures: j.Counts.Failures, paused: j.Paused, enabled: j.Enabled,
		learned: learnedOf(j.Durations)}
	if r.lock == r.name {
		r.lock = r.name // the decoder's copy goes
	} else {
		r.lock = in.str(r.lock)
	}
	more := jobMore{PausedBy: j.PausedBy, RunID: j.RunID, PID: j.PID, StartedAt: j.StartedAt, Deadline: j.Deadline,
		Holder: j.Holder, Problem: j.Problem, LastNotification: j.LastNotification, FailedPing: j.FailedPing,
		Attempt: j.Attempt, Slow: j.Slow, Adopted: j.Adopted, SupervisorPID: j.SupervisorPID,
		MaxAttempts: j.MaxAttempts, RetryAt: j.RetryAt, Progress: j.Progress, LastBeatAt: j.LastBeatAt,
		Resources: in.str(strings.Join(j.Resources, " ")), WaitingFor: j.WaitingFor}
	if more != (jobMore{}) {
		if more.Holder != nil && more.Holder.Job == j.Name {
			h := *more.Holder
			h.Job = r.name
			h.Host = in.str(h.Host)
			more.Holder = &h
		}
		r.more = &more
	}
	return r
}

// status is the row as the views read it.
func (r jobRow) status() ctl.JobStatus {
	j := ctl.JobStatus{Name: r.name, Schedule: r.schedule, Timezone: r.timezone, Lock: r.lock,
		State: r.state, LastOutcome: r.last, NextRun: unixTime(r.nextRun), LastEndedAt: unixTime(r.lastEndedAt),
		Counts: ctl.Counts{Since: unixTime(r.since), Runs: r.runs, Skips: r.skips, Failures: r.failures},
		Paused: r.paused, Enabled: r.enabled}
	if m := r.more; m != nil {
		j.PausedBy, j.RunID, j.PID, j.StartedAt, j.Deadline = m.PausedBy, m.RunID, m.PID, m.StartedAt, m.Deadline
		j.Holder, j.Problem, j.LastNotification, j.FailedPing = m.Holder, m.Problem, m.LastNotification, m.FailedPing
		j.Attempt, j.Slow, j.Adopted, j.SupervisorPID = m.Attempt, m.Slow, m.Adopted, m.SupervisorPID
		j.MaxAttempts, j.RetryAt = m.MaxAttempts, m.RetryAt
		j.Progress, j.LastBeatAt = m.Progress, m.LastBeatAt
		j.Resources, j.WaitingFor = strings.Fields(m.Resources), m.WaitingFor
	}
	return j
}

// same reports whether two rows say the same.
func (r jobRow) same(o jobRow) bool {
	a, b := r, o
	a.more, b.more, a.learned, b.learned = nil, nil, nil, nil
	if a != b || (r.learned == nil) != (o.learned == nil) || r.learned != nil && *r.learned != *o.learned {
		return false
	}
	switch {
	case r.more == nil || o.more == nil:
		return r.more == o.more
	}
	return sameMore(*r.more, *o.more)
}

func sameMore(a, b jobMore) bool {
	if !a.StartedAt.Equal(b.StartedAt) || !a.Deadline.Equal(b.Deadline) || !a.RetryAt.Equal(b.RetryAt) {
		return false
	}
	if (a.PausedBy == nil) != (b.PausedBy == nil) || a.PausedBy != nil && *a.PausedBy != *b.PausedBy {
		return false
	}
	if (a.Holder == nil) != (b.Holder == nil) || a.Holder != nil && *a.Holder != *b.Holder {
		return false
	}
	if (a.WaitingFor == nil) != (b.WaitingFor == nil) || a.WaitingFor != nil && *a.WaitingFor != *b.WaitingFor {
		return false
	}
	a.StartedAt, a.Deadline, a.PausedBy, a.Holder, a.RetryAt = b.StartedAt, b.Deadline, b.PausedBy, b.Holder, b.RetryAt
	a.WaitingFor = b.WaitingFor
	return a == b
}

// at is the job at position i of the store, as the views read it.
func (s *store) at(i int) ctl.JobStatus { return s.jobs[i].status() }

// edit changes the named job in place; false if unknown.
func (s *store) edit(name string, f func(j *ctl.JobStatus)) bool {
	i, ok := s.find(name)
	if !ok {
		return false
	}
	old := s.jobs[i]
	j := old.status()
	f(&j)
	s.jobs[i] = s.strs.compact(j, old.name)
	s.jobs[i].learned = old.learned // no event changes them: the read an event brings does
	return true
}
