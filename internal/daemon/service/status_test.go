package service

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/lock"
)

// t0 is the builder tests' "now".
var t0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// fakeLocks is a lock backend's listing.
type fakeLocks struct {
	all []lock.Status
	err error
}

func (f fakeLocks) List(context.Context) ([]lock.Status, error) { return f.all, f.err }

// fakeRecent is each job's history.
type fakeRecent map[string]Recent

func (f fakeRecent) Recent(job string) Recent { return f[job] }

// fakeLive is a running scheduler.
type fakeLive struct {
	next    map[string]time.Time
	stalls  map[string]run.Stall
	running map[string]Run
	queued  map[string]bool
	retry   map[string]Retry
	waiting map[string]*ctl.Waiting
	guard   *sync.Mutex // must be held while the per-job methods run
	t       *testing.T
}

func (f fakeLive) NextFires() map[string]time.Time { return f.next }
func (f fakeLive) Stalls() map[string]run.Stall    { return f.stalls }

func (f fakeLive) Running(job string) (Run, bool) {
	f.held()
	r, ok := f.running[job]
	return r, ok
}

func (f fakeLive) Queued(job string) bool { f.held(); return f.queued[job] }

func (f fakeLive) Waiting(job string) *ctl.Waiting { f.held(); return f.waiting[job] }

func (f fakeLive) Retrying(job string) (Retry, bool) {
	f.held()
	r, ok := f.retry[job]
	return r, ok
}

func (f fakeLive) held() {
	if f.guard != nil && f.guard.TryLock() {
		f.guard.Unlock()
		f.t.Error("a per-job method ran without the guard held")
	}
}

func statusJob(name, lockName string, enabled bool) config.Job {
	return config.Job{Name: name, Schedule: "@hourly", Location: time.UTC, Lock: lockName,
		Enabled: enabled, Overlap: config.OverlapSkip}
}

// byName indexes statuses for the checks.
func byName(st []ctl.JobStatus) map[string]ctl.JobStatus {
	m := map[string]ctl.JobStatus{}
	for _, s := range st {
		m[s.Name] = s
	}
	return m
}

func TestStatusesWithAScheduler(t *testing.T) {
	own := lock.Record{Holder: run.Holder{PID: 42, Host: "h", Job: "run", RunID: "r1", Since: t0.Add(-time.Minute)}}
	jobs := []config.Job{statusJob("run", "run", true), statusJob("wait", "run", true), statusJob("idle", "idle", true),
		statusJob("paused", "paused", true), statusJob("off", "off", false), statusJob("stuck", "stuck", true),
		statusJob("manual", "manual", true), statusJob("retry", "retry", true), statusJob("patient", "patient", true)}
	jobs[2].Timezone, jobs[2].Location = "Asia/Shanghai", time.FixedZone("CST", 8*3600)
	var mu sync.Mutex
	live := fakeLive{guard: &mu, t: t,
		next:    map[string]time.Time{"idle": t0.Add(time.Hour), "wait": t0.Add(time.Minute)},
		stalls:  map[string]run.Stall{"stuck": {Job: "stuck", After: t0, Retry: t0.Add(time.Minute)}},
		running: map[string]Run{"run": {RunID: "r1", PID: 42, Started: own.Since, Deadline: t0.Add(time.Hour), Resources: []string{"db/1"}}},
		waiting: map[string]*ctl.Waiting{"patient": {RunID: "p1", Resource: "db", Held: 2, Size: 2, Since: t0, Until: t0.Add(time.Minute)}},
		queued:  map[string]bool{"wait": true},
		retry:   map[string]Retry{"retry": {At: t0.Add(time.Minute), Attempt: 2, MaxAttempts: 3}}}
	by := &ctl.PauseInfo{User: "alice", At: t0.Add(-time.Hour)}
	b := Statuses{
		// A foreground `cronvisor run` holds manual's lock: the daemon does
		// not call that its own run.
		Locks: fakeLocks{all: []lock.Status{{Name: "run", Held: true, Record: own},
			{Name: "manual", Held: true, Record: lock.Record{Holder: run.Holder{PID: 7, Job: "manual", RunID: "m1"}}},
			// The slot keeps its lock between attempts; the record names
			// the attempt that ended, whose pid is gone.
			{Name: "retry", Held: true, Record: lock.Record{Holder: run.Holder{PID: 8, Job: "retry", RunID: "t1"}}}}},
		History: fakeRecent{"idle": {Outcome: "ok", Started: t0.Add(-2 * time.Hour), Ended: t0.Add(-time.Hour),
			Counts: ctl.Counts{Since: t0.Add(-24 * time.Hour), Runs: 3}}},
		Pauses: PauseFile{"paused": *by},
		Live:   live, Health: func() string { return "history degraded" }, Guard: &mu,
	}
	got := byName(b.Build(context.Background(), jobs))
	tests := []struct {
		job   string
		check func(ctl.JobStatus) bool
		want  string
	}{
		{"run", func(s ctl.JobStatus) bool {
			return s.State == ctl.StateRunning && s.RunID == "r1" && s.PID == 42 && s.Deadline.Equal(t0.Add(time.Hour)) && s.Holder.RunID == "r1" &&
				reflect.DeepEqual(s.Resources, []string{"db/1"})
		}, "running r1, pid 42, its deadline, holding its lock and slot db/1"},
		{"patient", func(s ctl.JobStatus) bool {
			return s.State == ctl.StateWaiting && s.WaitingFor != nil && s.WaitingFor.String() == "waiting for db (2/2 held)" &&
				s.WaitingFor.Until.Equal(t0.Add(time.Minute))
		}, "waiting for db (2/2 held) until a minute on"},
		{"wait", func(s ctl.JobStatus) bool {
			return s.State == ctl.StateQueued && s.Holder.Job == "run" && s.NextRun.Equal(t0.Add(time.Minute))
		},
			"queued behind run's holder"},
		{"idle", func(s ctl.JobStatus) bool {
			return s.State == ctl.StateIdle && s.Timezone == "Asia/Shanghai" && s.LastOutcome == "ok" && s.Counts.Runs == 3 && s.History == "history degraded"
		}, "idle in its zone, with its history"},
		{"paused", func(s ctl.JobStatus) bool {
			return s.State == ctl.StatePaused && s.Paused && reflect.DeepEqual(s.PausedBy, by)
		}, "paused by alice"},
		{"off", func(s ctl.JobStatus) bool { return s.State == ctl.StateDisabled && s.Timezone == "UTC" }, "disabled, zone UTC"},
		{"stuck", func(s ctl.JobStatus) bool { return s.State == ctl.StateUnschedulable && s.Problem != "" }, "unschedulable"},
		{"manual", func(s ctl.JobStatus) bool {
			return s.State == ctl.StateIdle && s.Holder != nil && s.Holder.RunID == "m1"
		}, "idle, held by m1"},
		{"retry", func(s ctl.JobStatus) bool {
			return s.State == ctl.StateRetrying && s.RetryAt.Equal(t0.Add(time.Minute)) && s.Attempt == 2 &&
				s.MaxAttempts == 3 && s.Holder == nil && s.PID == 0
		}, "retrying: attempt 2/3 at its time, no dead pid as holder"},
	}
	for _, tc := range tests {
		t.Run(tc.job, func(t *testing.T) {
			if s := got[tc.job]; !tc.check(s) {
				t.Errorf("%+v, want %s", s, tc.want)
			}
		})
	}
}

func TestStatusesWithoutAScheduler(t *testing.T) {
	own := lock.Record{Holder: run.Holder{PID: 42, Host: "h", Job: "run", RunID: "r1", Since: t0.Add(-time.Minute)}}
	jobs := []config.Job{statusJob("run", "run", true), statusJob("shared", "run", true), statusJob("foreign", "tmp", true),
		statusJob("paused", "paused", true), statusJob("off", "off", false), statusJob("allow", "run", true)}
	jobs[5].Overlap = config.OverlapAllow
	b := Statuses{
		Locks: fakeLocks{all: []lock.Status{{Name: "run", Held: true, Record: own},
			{Name: "tmp", Held: true, Record: lock.Record{Holder: run.Holder{PID: 9, Foreign: true, Cmdline: "flock tmp sleep 9"}}}}},
		History: fakeRecent{"run": {Outcome: "skipped", Ended: t0, Started: t0.Add(-time.Hour)}},
		Pauses:  PauseFile{"paused": {User: "bob"}},
	}
	got := byName(b.Build(context.Background(), jobs))
	tests := []struct {
		job   string
		check func(ctl.JobStatus) bool
		want  string
	}{
		{"run", func(s ctl.JobStatus) bool {
			return s.State == ctl.StateRunning && s.RunID == "r1" && s.PID == 42 && s.StartedAt.Equal(own.Since) &&
				s.LastOutcome == "skipped" && s.LastStartedAt.Equal(t0.Add(-time.Hour)) && s.NextRun.IsZero()
		}, "running by its lock file, no next run"},
		{"shared", func(s ctl.JobStatus) bool { return s.State == ctl.StateIdle && s.Holder.Job == "run" }, "idle, its lock held by run"},
		{"foreign", func(s ctl.JobStatus) bool { return s.State == ctl.StateIdle && s.Holder.Foreign }, "idle, held outside cronvisor"},
		{"paused", func(s ctl.JobStatus) bool { return s.State == ctl.StatePaused && s.PausedBy.User == "bob" }, "paused by bob"},
		{"off", func(s ctl.JobStatus) bool { return s.State == ctl.StateDisabled && s.Timezone == "UTC" }, "disabled, in the zone the daemon names"},
		{"allow", func(s ctl.JobStatus) bool { return s.State == ctl.StateIdle && s.Holder == nil }, "idle: it takes no lock"},
	}
	for _, tc := range tests {
		t.Run(tc.job, func(t *testing.T) {
			if s := got[tc.job]; !tc.check(s) {
				t.Errorf("%+v, want %s", s, tc.want)
			}
		})
	}
}

// TestStatusesSurviveAnUnreadableLockBackend: a failing listing costs the
// holders, not the statuses.
func TestStatusesSurviveAnUnreadableLockBackend(t *testing.T) {
	b := Statuses{Locks: fakeLocks{err: errors.New("redis: connection refused")}}
	got := b.Build(context.Background(), []config.Job{statusJob("a", "a", true)})
	if len(got) != 1 || got[0].State != ctl.StateIdle || got[0].Holder != nil || got[0].Timezone != "UTC" {
		t.Errorf("statuses %+v, want a idle without a holder", got)
	}
}

// TestStatusesGiveAnAdoptedRunItsDeadline: a run adopted from a dead
// supervisor is known by its lock record alone, which has no deadline;
// the status gives it the one its supervisor set (its start plus the
// job's timeout), as an own run's, so that the console reads `8s/10m`.
func TestStatusesGiveAnAdoptedRunItsDeadline(t *testing.T) {
	since := t0.Add(-8 * time.Second)
	rec := lock.Record{Holder: run.Holder{PID: 42, Host: "h", Job: "kept", RunID: "r9", Since: since}, SupervisorPID: 7}
	jobs := []config.Job{statusJob("kept", "kept", true), statusJob("none", "none", true)}
	jobs[0].Timeout = 10 * time.Minute
	tests := []struct {
		name string
		b    Statuses
	}{
		{"adopted by a live scheduler", Statuses{Live: fakeLive{}, Adopted: func(string) (int, bool) { return 7, true }}},
		{"read without a scheduler", Statuses{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.b.Locks = fakeLocks{all: []lock.Status{{Name: "kept", Held: true, Record: rec},
				{Name: "none", Held: true, Record: lock.Record{Holder: run.Holder{PID: 43, Job: "none", RunID: "r8", Since: since}}}}}
			got := byName(tc.b.Build(context.Background(), jobs))
			if s := got["kept"]; s.State != ctl.StateRunning || !s.Deadline.Equal(since.Add(10*time.Minute)) {
				t.Errorf("kept: state %s, deadline %v; want running, deadline %v", s.State, s.Deadline, since.Add(10*time.Minute))
			}
			if s := got["none"]; !s.Deadline.IsZero() {
				t.Errorf("none: deadline %v, want none (the job has no timeout)", s.Deadline)
			}
		})
	}
}
