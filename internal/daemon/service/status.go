package service

import (
	"context"
	"slices"
	"sync"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/lock"
)

// Statuses builds job statuses, the one place that does: the daemon's Jobs
// and `cronvisor status` without a daemon both call it, with what each
// has. Without a scheduler (Live nil) nothing fires, so no job has a next
// run, and a job whose own run holds its lock is running by the lock file.
type Statuses struct {
	Locks   LockLister // every lock's holder; required
	History RecentRuns // each job's last outcome and run; nil: none known
	Pauses  Pauses     // which jobs are paused, by whom; nil: none
	Live    Live       // the running scheduler; nil without one
	// Health is the history's state for JobStatus.History, "" while it
	// works; nil: "".
	Health func() string
	// Alerts gives JobStatus.LastNotification and FailedPing (the
	// daemon's notifier); nil: none.
	Alerts func(job string) (notification, failedPing string)
	// Adopted says which runs holding a job's lock a dead supervisor
	// left to their keepers (recovery watches them), and its pid: with a
	// scheduler, they are shown running as its own. Nil: none.
	Adopted func(runID string) (supervisorPID int, ok bool)
	// Guard, when set, is held while History, Pauses and Live's per-job
	// methods are read, so that every job is seen at one moment; the lock
	// backend and the scheduler are read before it is taken.
	Guard sync.Locker
	// Held, when set, is the lock holders by lock name, read once for a
	// table built a part at a time (see Service.EachJobs); nil: Build
	// reads them.
	Held map[string]lock.Record
	// Durations, when set, gives each job's learned figures
	// (JobStatus.Durations); nil: none.
	Durations LearnedDurations
}

// LockLister lists the locks and their holders (a lock.Locker).
type LockLister interface {
	List(ctx context.Context) ([]lock.Status, error)
}

// Recent is what the history says of one job.
type Recent struct {
	Outcome run.Outcome // the newest record's, "" if none
	Ended   time.Time   // when the newest record ended (a skip: when it was skipped)
	Started time.Time   // when the newest run started; a skip after it has no start
	Counts  ctl.Counts
}

// RecentRuns gives each job's Recent.
type RecentRuns interface {
	Recent(job string) Recent
}

// Pauses says whether a job is paused and, when known, who paused it.
type Pauses interface {
	Paused(job string) (by *ctl.PauseInfo, paused bool)
}

// Run is a run in flight.
type Run struct {
	RunID             string
	PID               int
	Started, Deadline time.Time
	Attempt           int    // in its slot; 0 when unknown
	MaxAttempts       int    // the slot's attempts in all; 0 when the job does not retry
	Slow              bool   // it has passed its job's warn_after
	SlowReason        string // why it is slow
	// Adopted: a dead supervisor's run, still going with its keeper;
	// SupervisorPID is that supervisor's.
	Adopted       bool
	SupervisorPID int
	// Progress and LastBeat are its newest beat's (docs/heartbeats.md).
	Progress string
	LastBeat time.Time
	// Resources are the resource slots it holds ("db/1").
	Resources []string
}

// Retry is a slot waiting for its next attempt, Attempt of MaxAttempts,
// due At.
type Retry struct {
	At                   time.Time
	Attempt, MaxAttempts int
}

// Live is what a running scheduler knows.
type Live interface {
	NextFires() map[string]time.Time
	Stalls() map[string]run.Stall
	// Running is the job's newest run in flight; false for none.
	Running(job string) (Run, bool)
	// Retrying is the job's slot waiting for a retry; false for none.
	Retrying(job string) (Retry, bool)
	// Queued reports whether a fire of the job waits for its lock.
	Queued(job string) bool
	// Waiting is what a fire of the job waits for, holding its lock: a
	// slot of a full resource (on_full: wait); nil for none.
	Waiting(job string) *ctl.Waiting
}

// Build returns the status of each of jobs, in their order. Locks that
// cannot be read leave the jobs' holders out rather than failing: the
// rest of the status is still true.
func (b Statuses) Build(ctx context.Context, jobs []config.Job) []ctl.JobStatus {
	return b.Append(ctx, nil, jobs)
}

// Append is Build appending to dst: a table built a part at a time
// reuses one part's slice for the next.
func (b Statuses) Append(ctx context.Context, dst []ctl.JobStatus, jobs []config.Job) []ctl.JobStatus {
	held := b.Held
	if held == nil {
		held = b.held(ctx, jobs)
	}
	next := b.nextFires(jobs)
	var stalls map[string]run.Stall
	if b.Live != nil {
		stalls = b.Live.Stalls()
	}
	var health string
	if b.Health != nil {
		health = b.Health()
	}
	// Read before Guard is taken: a job's first read goes to the store.
	learned := b.learned(ctx, jobs)
	if b.Guard != nil {
		b.Guard.Lock()
		defer b.Guard.Unlock()
	}
	out := slices.Grow(dst, len(jobs))
	for _, j := range jobs {
		js := ctl.JobStatus{Name: j.Name, Schedule: j.Schedule, Timezone: j.ZoneName(), Lock: j.Lock,
			Enabled: j.Enabled, NextRun: next[j.Name], History: health}
		if b.History != nil {
			r := b.History.Recent(j.Name)
			js.LastOutcome, js.LastStartedAt, js.LastEndedAt, js.Counts = r.Outcome, r.Started, r.Ended, r.Counts
		}
		if b.Pauses != nil {
			js.PausedBy, js.Paused = b.Pauses.Paused(j.Name)
		}
		if b.Alerts != nil {
			js.LastNotification, js.FailedPing = b.Alerts(j.Name)
		}
		if h, ok := held[j.Lock]; ok && j.Overlap != config.OverlapAllow {
			js.Holder = HolderOf(h)
		}
		if learned != nil {
			js.Durations = DurationsOf(j, learned[j.Name])
		}
		js.State = b.state(j, &js, held)
		if stall, ok := stalls[j.Name]; ok && js.State == ctl.StateIdle {
			js.State, js.Problem = ctl.StateUnschedulable, stallProblem(stall)
		}
		out = append(out, js)
	}
	return out
}

// inspectUpTo is the most jobs whose locks Build inspects one by one
// rather than listing every lock: a console's rows on screen, not a whole
// table.
const inspectUpTo = 256

// held is the holders of the locks of jobs, by lock name: each lock
// inspected for a few jobs when the lister can, else every lock listed.
// Locks that cannot be read are left out.
func (b Statuses) held(ctx context.Context, jobs []config.Job) map[string]lock.Record {
	held := map[string]lock.Record{}
	in, ok := b.Locks.(interface {
		Inspect(ctx context.Context, name string) (lock.Status, error)
	})
	if ok && len(jobs) <= inspectUpTo {
		for _, j := range jobs {
			if _, seen := held[j.Lock]; seen || j.Overlap == config.OverlapAllow {
				continue
			}
			if st, err := in.Inspect(ctx, j.Lock); err == nil && st.Held {
				held[j.Lock] = st.Record
			}
		}
		return held
	}
	all, _ := b.Locks.List(ctx) // what it could read, beside an error
	for _, l := range all {
		if l.Held {
			held[l.Name] = l.Record
		}
	}
	return held
}

// nextFirer is a Live that gives one job's next fire alone.
type nextFirer interface {
	NextFire(job string) (time.Time, bool)
}

// nextFires is the next fires of jobs: asked job by job for a few jobs
// when Live can, so that the status of one job among a million copies no
// other job's; else every job's.
func (b Statuses) nextFires(jobs []config.Job) map[string]time.Time {
	if b.Live == nil {
		return nil
	}
	one, ok := b.Live.(nextFirer)
	if !ok || len(jobs) > inspectUpTo {
		return b.Live.NextFires()
	}
	next := make(map[string]time.Time, len(jobs))
	for _, j := range jobs {
		if t, ok := one.NextFire(j.Name); ok {
			next[j.Name] = t
		}
	}
	return next
}

// state picks the job's state and fills in its current run: the
// scheduler's, or without one the run that holds the job's lock.
func (b Statuses) state(j config.Job, js *ctl.JobStatus, held map[string]lock.Record) ctl.JobState {
	cur, running := b.running(j, held)
	switch {
	case running:
		js.RunID, js.PID, js.StartedAt, js.Deadline = cur.RunID, cur.PID, cur.Started, cur.Deadline
		js.Attempt, js.MaxAttempts, js.Slow, js.SlowReason = cur.Attempt, cur.MaxAttempts, cur.Slow, cur.SlowReason
		js.Adopted, js.SupervisorPID = cur.Adopted, cur.SupervisorPID
		js.Progress, js.LastBeatAt = cur.Progress, cur.LastBeat
		js.Resources = cur.Resources
		return ctl.StateRunning
	case b.retrying(j, js):
		return ctl.StateRetrying
	case b.Live != nil && b.Live.Queued(j.Name):
		return ctl.StateQueued
	case b.waiting(j, js):
		return ctl.StateWaiting
	case js.Paused:
		return ctl.StatePaused
	case !j.Enabled:
		return ctl.StateDisabled
	}
	return ctl.StateIdle
}

// waiting fills in what a fire of the job waits for, if one waits for
// a resource's slot.
func (b Statuses) waiting(j config.Job, js *ctl.JobStatus) bool {
	if b.Live == nil {
		return false
	}
	js.WaitingFor = b.Live.Waiting(j.Name)
	return js.WaitingFor != nil
}

// retrying fills in the job's wait for a retry, if it waits. The slot
// keeps its lock meanwhile, whose record still names the attempt that
// ended: that is no holder to show, its pid is gone.
func (b Statuses) retrying(j config.Job, js *ctl.JobStatus) bool {
	if b.Live == nil {
		return false
	}
	r, ok := b.Live.Retrying(j.Name)
	if !ok {
		return false
	}
	js.RetryAt, js.Attempt, js.MaxAttempts = r.At, r.Attempt, r.MaxAttempts
	if h := js.Holder; h != nil && !h.Foreign && h.Job == j.Name {
		js.Holder = nil
	}
	return true
}

func (b Statuses) running(j config.Job, held map[string]lock.Record) (Run, bool) {
	if b.Live != nil {
		if r, ok := b.Live.Running(j.Name); ok {
			return r, true
		}
	}
	h, ok := held[j.Lock]
	if !ok || j.Overlap == config.OverlapAllow || h.Foreign || h.Job != j.Name {
		return Run{}, false
	}
	r := Run{RunID: h.RunID, PID: h.PID, Started: h.Since}
	// The lock record has no deadline: a dead supervisor set it at the
	// run's start from the job's timeout, and its keeper (or guard) ends
	// the run then, so the status shows it as it shows an own run's.
	if j.Timeout > 0 && !h.Since.IsZero() {
		r.Deadline = h.Since.Add(j.Timeout)
	}
	if b.Adopted != nil {
		r.SupervisorPID, r.Adopted = b.Adopted(h.RunID)
	}
	if b.Live != nil && !r.Adopted {
		return Run{}, false // another live supervisor's: shown as the holder
	}
	return r, true
}

// stallProblem says why a job has no next fire, for status and the console.
func stallProblem(st run.Stall) string {
	return "no next fire after " + st.After.Format(time.RFC3339) + " could be computed; retrying at " + st.Retry.Format(time.RFC3339)
}
