package ui

import (
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// The fixture is one supervisor on host web-1 at ref:
//   - sync_orders runs (pid 4321, 25 s of its 1m30s) and holds lock
//     "orders"; its fire 5 s ago was skipped because of that run;
//   - refund_orders shares lock "orders" and waits in the queue;
//   - cleanup_tmp's lock is held by flock(1) outside cronvisor;
//   - report_weekly is paused after a failure, send_digest disabled.
const (
	host     = "web-1"
	syncPID  = 4321
	flockPID = 777
	flockCmd = "flock -n /srv/app/.cronvisor/locks/tmp.lock sleep 600"
)

func exit(n int) *int { return &n }

func fixtureJobs() []ctl.JobStatus {
	jobs := fixtureStatuses()
	for i := range jobs {
		jobs[i].Durations = fixtureDurations[jobs[i].Name]
	}
	return jobs
}

// fixtureDurations are the jobs' learned figures: sync_orders learns its
// slow and fast bounds (warn_after and warn_fast: auto) and had one fast
// run; rotate_logs had two runs past its p95; refund_orders' timeout is
// far above its runs; backup_db and report_weekly have too few runs to
// judge; send_digest never ran.
var fixtureDurations = map[string]*ctl.Durations{
	"backup_db": {Runs: 1, P5MS: 42000, P50MS: 42000, P95MS: 42000, P99MS: 42000, MaxMS: 42000, RecentMS: []int64{42000}},
	"cleanup_tmp": {Runs: 22, P5MS: 1300, P50MS: 1500, P95MS: 1800, P99MS: 1900, MaxMS: 1950, SuggestedTimeoutMS: 70000,
		RecentMS: []int64{1500, 1450, 1520, 1480, 1900, 1500, 1510, 1490, 1300, 1500, 1550, 1470, 1500, 1520, 1480, 1500}},
	"refund_orders": {Runs: 12, P5MS: 2800, P50MS: 3000, P95MS: 3150, P99MS: 3200, MaxMS: 3200, SuggestedTimeoutMS: 70000,
		TimeoutAdvice: "timeout 24h0m0s is far above the p99 of the last 12 runs (3.2s): a hang runs 24h0m0s before it is ended; suggested timeout 1m10s",
		RecentMS:      []int64{2900, 3000, 3100, 2950, 3000, 3050, 2800, 3000, 3200, 3000, 2950, 3000}},
	"report_weekly": {Runs: 3, P5MS: 118700, P50MS: 125000, P95MS: 130400, P99MS: 130900, MaxMS: 131000,
		RecentMS: []int64{118000, 131000, 125000}},
	"rotate_logs": {Runs: 22, P5MS: 230000, P50MS: 250000, P95MS: 420000, P99MS: 540000, MaxMS: 570000, SuggestedTimeoutMS: 1620000,
		RecentMS: []int64{250000, 245000, 260000, 238000, 570000, 251000, 249000, 255000, 242000, 430000, 250000, 248000, 252000, 246000, 250000, 253000}},
	"sync_orders": {Runs: 50, P5MS: 5800, P50MS: 6050, P95MS: 8000, P99MS: 8400, MaxMS: 9100,
		SlowAfterMS: 18400, FastBelowMS: 1450, SuggestedTimeoutMS: 70000,
		RecentMS: []int64{6100, 5900, 6200, 9100, 6050, 900, 6000, 6100, 6300, 6150, 5950, 6000, 6000, 6000, 6000, 8200}},
}

func fixtureStatuses() []ctl.JobStatus {
	since := at(-24 * time.Hour)
	own := &run.Holder{PID: syncPID, Host: host, Job: "sync_orders", RunID: "r-sync-7", Since: at(-25 * time.Second)}
	return []ctl.JobStatus{
		{Name: "backup_db", Schedule: "0 3 * * *", Timezone: "UTC", State: ctl.StateIdle, Enabled: true,
			LastOutcome: "ok", LastStartedAt: at(-9 * time.Hour), LastEndedAt: at(-9*time.Hour + 42*time.Second),
			NextRun: at(15 * time.Hour), Lock: "backup_db", Counts: ctl.Counts{Since: since, Runs: 1}},
		{Name: "cleanup_tmp", Schedule: "@hourly", Timezone: "UTC", State: ctl.StateIdle, Enabled: true,
			LastOutcome: "skipped", LastEndedAt: at(-30 * time.Minute), NextRun: at(30 * time.Minute), Lock: "tmp",
			Holder: &run.Holder{PID: flockPID, Host: host, Since: at(-47 * time.Minute), Foreign: true, Cmdline: flockCmd},
			Counts: ctl.Counts{Since: since, Runs: 23, Skips: 1}},
		{Name: "refund_orders", Schedule: "*/2 * * * *", Timezone: "Asia/Shanghai", State: ctl.StateQueued, Enabled: true,
			LastOutcome: "ok", LastEndedAt: at(-2 * time.Minute), NextRun: at(2 * time.Minute), Lock: "orders",
			Holder: own, Counts: ctl.Counts{Since: since, Runs: 710, Skips: 3}},
		{Name: "report_weekly", Schedule: "0 6 * * 1", Timezone: "UTC", State: ctl.StatePaused, Paused: true, Enabled: true,
			PausedBy:    &ctl.PauseInfo{User: "alice", UID: 1000, PID: 4242, Via: "cronvisor", At: at(-2 * time.Hour)},
			LastOutcome: "failed", LastEndedAt: at(-5 * 24 * time.Hour), NextRun: at(42 * time.Hour), Lock: "report_weekly",
			Counts: ctl.Counts{Since: since}},
		{Name: "rotate_logs", Schedule: "15 * * * *", Timezone: "UTC", State: ctl.StateIdle, Enabled: true,
			LastOutcome: "timeout", LastEndedAt: at(-45 * time.Minute), NextRun: at(15 * time.Minute), Lock: "rotate_logs",
			Counts: ctl.Counts{Since: since, Runs: 24, Failures: 2}},
		{Name: "send_digest", Schedule: "30 8 * * *", Timezone: "UTC", State: ctl.StateDisabled, Lock: "send_digest",
			Counts: ctl.Counts{Since: since}},
		{Name: "sync_orders", Schedule: "@every 10s", Timezone: "UTC", State: ctl.StateRunning, Enabled: true,
			RunID: "r-sync-7", PID: syncPID, StartedAt: at(-25 * time.Second), Deadline: at(65 * time.Second),
			LastOutcome: "skipped", LastStartedAt: at(-25 * time.Second), LastEndedAt: at(-5 * time.Second),
			NextRun: at(5 * time.Second), Lock: "orders", Holder: own,
			Counts: ctl.Counts{Since: since, Runs: 8630, Skips: 212, Failures: 4}},
	}
}

func fixtureLocks() []ctl.LockStatus {
	return []ctl.LockStatus{
		{Lock: "backup_db", PID: 9001, Host: host, Job: "backup_db", RunID: "r-backup-1",
			Since: at(-9 * time.Hour), SupervisorPID: 100},
		{Lock: "orders", Held: true, PID: syncPID, Host: host, Job: "sync_orders", RunID: "r-sync-7",
			Slot: at(-25 * time.Second), Since: at(-25 * time.Second), SupervisorPID: 100},
		{Lock: "report_weekly"},
		{Lock: "rotate_logs", PID: 9020, Host: host, Job: "rotate_logs", RunID: "r-rotate-24",
			Since: at(-time.Hour), SupervisorPID: 100},
		{Lock: "send_digest"},
		{Lock: "tmp", Held: true, PID: flockPID, Host: host, Since: at(-47 * time.Minute),
			Foreign: true, Cmdline: flockCmd},
	}
}

// fixtureRecords is the recent history, newest first: sync_orders
// overlapping itself, the foreign holder blocking cleanup_tmp, a timeout
// and a failure.
func fixtureRecords() []run.Record {
	var recs []run.Record
	add := func(r run.Record) { recs = append(recs, r) }
	syncHolder := &run.Holder{PID: syncPID, Host: host, Job: "sync_orders", RunID: "r-sync-7", Since: at(-25 * time.Second)}
	add(run.Record{Job: "sync_orders", RunID: "r-sync-s3", Outcome: "skipped", ScheduledAt: at(-5 * time.Second),
		Reason: "lock held by pid 4321@web-1 (job sync_orders, run r-sync-7)", Holder: syncHolder})
	add(run.Record{Job: "sync_orders", RunID: "r-sync-s2", Outcome: "skipped", ScheduledAt: at(-15 * time.Second),
		Reason: "lock held by pid 4321@web-1 (job sync_orders, run r-sync-7)", Holder: syncHolder})
	add(run.Record{Job: "sync_orders", RunID: "r-sync-6", Outcome: "ok", ScheduledAt: at(-40 * time.Second),
		StartedAt: at(-40 * time.Second), EndedAt: at(-40*time.Second + 8200*time.Millisecond), ExitCode: exit(0),
		LogPath: "/srv/app/.cronvisor/logs/sync_orders/r-sync-6.log",
		Usage:   run.Usage{Measured: true, CPUUser: 520 * time.Millisecond, CPUSystem: 30 * time.Millisecond, MemoryPeak: 120 << 20}})
	for i := 0; i < 6; i++ {
		slot := at(-time.Duration(50+10*i) * time.Second)
		out := "ok"
		if i%3 == 1 {
			out = "skipped"
		}
		if i == 4 {
			out = "failed"
		}
		r := run.Record{Job: "sync_orders", RunID: "r-sync-old" + itoa(i), Outcome: run.Outcome(out), ScheduledAt: slot}
		switch out {
		case "skipped":
			r.Holder = &run.Holder{PID: 4300 + i, Host: host, Job: "sync_orders", RunID: "r-prev", Since: slot.Add(-12 * time.Second)}
		default:
			r.StartedAt, r.EndedAt, r.ExitCode = slot, slot.Add(6*time.Second), exit(0)
		}
		if out == "failed" {
			r.ExitCode, r.Reason = exit(2), "exit status 2"
		}
		add(r)
	}
	add(run.Record{Job: "refund_orders", RunID: "r-refund-9", Outcome: "ok", ScheduledAt: at(-2 * time.Minute),
		StartedAt: at(-2 * time.Minute), EndedAt: at(-2*time.Minute + 3*time.Second), ExitCode: exit(0)})
	add(run.Record{Job: "cleanup_tmp", RunID: "r-clean-s1", Outcome: "skipped", ScheduledAt: at(-30 * time.Minute),
		Reason: "lock held by pid 777 (outside cronvisor: " + flockCmd + ")",
		Holder: &run.Holder{PID: flockPID, Host: host, Since: at(-47 * time.Minute)}})
	add(run.Record{Job: "rotate_logs", RunID: "r-rotate-24", Outcome: "timeout", ScheduledAt: at(-45*time.Minute - 10*time.Minute),
		StartedAt: at(-55 * time.Minute), EndedAt: at(-45 * time.Minute), Reason: "exceeded timeout 10m0s"})
	add(run.Record{Job: "cleanup_tmp", RunID: "r-clean-23", Outcome: "ok", ScheduledAt: at(-90 * time.Minute),
		StartedAt: at(-90 * time.Minute), EndedAt: at(-90*time.Minute + 1500*time.Millisecond), ExitCode: exit(0)})
	add(run.Record{Job: "backup_db", RunID: "r-backup-1", Outcome: "ok", ScheduledAt: at(-9 * time.Hour),
		StartedAt: at(-9 * time.Hour), EndedAt: at(-9*time.Hour + 42*time.Second), ExitCode: exit(0)})
	add(run.Record{Job: "report_weekly", RunID: "r-report-3", Outcome: "failed", ScheduledAt: at(-5*24*time.Hour - time.Minute),
		StartedAt: at(-5*24*time.Hour - time.Minute), EndedAt: at(-5 * 24 * time.Hour), ExitCode: exit(1), Reason: "exit status 1"})
	return recs
}

// fixtureHosts is a fleet of three sharing the history: this host, one
// whose clock is 1.5 s ahead running two jobs, and one lost.
func fixtureHosts() ctl.Hosts {
	return ctl.Hosts{Shared: true, Self: "web-1.example.com", Hosts: []ctl.HostStatus{
		{Host: "web-1.example.com", State: "up", Version: "v1.4.0", PID: 4000, StartedAt: at(-26 * time.Hour),
			LastBeat: at(-400 * time.Millisecond), SilentMS: 400, ClockOffsetMS: -3,
			Running: []ctl.HostRun{{Job: "sync_orders", RunID: "r-sync-7", StartedAt: at(-25 * time.Second)}}},
		{Host: "web-2.example.com", State: "up", Version: "v1.4.0", PID: 3120, StartedAt: at(-2 * time.Hour),
			LastBeat: at(-time.Second), SilentMS: 900, ClockOffsetMS: 1500,
			Running: []ctl.HostRun{{Job: "backup_db", RunID: "r-b-88", StartedAt: at(-3 * time.Minute)},
				{Job: "rotate_logs", RunID: "r-rot-2", StartedAt: at(-4 * time.Second)}}},
		{Host: "batch-3.example.com", State: "lost", Version: "v1.3.2", PID: 977, StartedAt: at(-50 * time.Hour),
			LastBeat: at(-2 * time.Minute), SilentMS: 120000, ClockOffsetMS: 12, Running: []ctl.HostRun{}},
	}}
}
