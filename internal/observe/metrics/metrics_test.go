package metrics

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"cronvisor/internal/base/run"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func finish(job, id string, o run.Outcome, started time.Time, d time.Duration) []run.Event {
	return []run.Event{
		run.Start{Job: job, RunID: id, Slot: started.Add(-2 * time.Millisecond), Started: started, Attempt: 1},
		run.End{Job: job, RunID: id, Slot: started, Started: started, Ended: started.Add(d), Outcome: o, Attempt: 1},
	}
}

func TestCountsFromEvents(t *testing.T) {
	m := New(Sources{
		NextFires:     func() map[string]time.Time { return map[string]time.Time{"a": t0.Add(time.Hour)} },
		HistoryFailed: func() int64 { return 2 },
		LeftToOwner:   func() int64 { return 5 },
	})
	var evs []run.Event
	evs = append(evs, finish("a", "r1", run.OK, t0, time.Second)...)
	evs = append(evs, finish("a", "r2", run.Failed, t0.Add(time.Minute), time.Second)...)
	evs = append(evs, finish("a", "r3", run.Timeout, t0.Add(2*time.Minute), time.Second)...)
	evs = append(evs,
		run.Skip{Job: "a", RunID: "s1", Reason: "lock held by x", Class: run.ClassLockHeld, Holder: &run.Holder{PID: 1}},
		run.Skip{Job: "a", RunID: "s2", Reason: "lock held by y", Class: run.ClassLockHeld},
		run.Skip{Job: "b", RunID: "s3", Reason: "missed: woke late", Class: run.ClassMissed},
		run.Skip{Job: "b", RunID: "s4", Reason: "lock backend unreachable", Class: run.ClassBackendUnreachable},
		run.Start{Job: "b", RunID: "r4", Slot: t0, Started: t0, Attempt: 1},
		// Another host's run, closed here: counted once across the
		// fleet, by the peer that closed it, as an interrupted run;
		// running and the streaks are left to their own host.
		run.HostLost{Job: "b", RunID: "r9", Host: "h2", Started: t0, Ended: t0, Time: t0, Reason: "host lost: x"},
		run.End{Job: "c", RunID: "r5", Slot: t0, Ended: t0, Outcome: run.Error, Reason: "cannot take lock: x", Class: run.ClassBackendUnreachable},
	)
	for _, ev := range evs {
		m.Handle(ev)
	}
	m.Delivered("webhook", "ok")
	m.Delivered("ping", "failed")
	want := `
# HELP cronvisor_runs_total Runs (attempts) that ended, by job and outcome.
# TYPE cronvisor_runs_total counter
cronvisor_runs_total{job="a",outcome="failed"} 1
cronvisor_runs_total{job="a",outcome="ok"} 1
cronvisor_runs_total{job="a",outcome="timeout"} 1
cronvisor_runs_total{job="b",outcome="interrupted"} 1
cronvisor_runs_total{job="c",outcome="error"} 1
# HELP cronvisor_skips_total Fires that did not run, by job and reason class (lock_held, slot_already_run, paused, missed, backend_unreachable, queued, dropped, disabled).
# TYPE cronvisor_skips_total counter
cronvisor_skips_total{job="a",reason="lock_held"} 2
cronvisor_skips_total{job="b",reason="backend_unreachable"} 1
cronvisor_skips_total{job="b",reason="missed"} 1
# HELP cronvisor_running Runs of the job in flight under this supervisor.
# TYPE cronvisor_running gauge
cronvisor_running{job="a"} 0
cronvisor_running{job="b"} 1
# HELP cronvisor_lock_backend_errors_total Fires the lock backend failed (unreachable, or an error taking the lock).
# TYPE cronvisor_lock_backend_errors_total counter
cronvisor_lock_backend_errors_total 2
# HELP cronvisor_history_write_failures_total History writes that failed (records kept in memory to retry count each failure).
# TYPE cronvisor_history_write_failures_total counter
cronvisor_history_write_failures_total 2
# HELP cronvisor_slots_left_to_owner_total Scheduled slots this host left to the job's owner in the fleet (no lock, no record here).
# TYPE cronvisor_slots_left_to_owner_total counter
cronvisor_slots_left_to_owner_total 5
# HELP cronvisor_notifications_total Notification and ping deliveries, by kind (webhook, command, ping) and result (ok, failed, dropped).
# TYPE cronvisor_notifications_total counter
cronvisor_notifications_total{kind="ping",result="failed"} 1
cronvisor_notifications_total{kind="webhook",result="ok"} 1
# HELP cronvisor_next_fire_timestamp_seconds When the job fires next (Unix time, jitter included).
# TYPE cronvisor_next_fire_timestamp_seconds gauge
cronvisor_next_fire_timestamp_seconds{job="a"} ` + fmt.Sprintf("%g", float64(t0.Add(time.Hour).Unix())) + `
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want),
		"cronvisor_runs_total", "cronvisor_skips_total", "cronvisor_running", "cronvisor_lock_backend_errors_total",
		"cronvisor_history_write_failures_total", "cronvisor_slots_left_to_owner_total", "cronvisor_notifications_total",
		"cronvisor_next_fire_timestamp_seconds"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m.duration); n != 1 {
		t.Errorf("duration series = %d, want 1 (job a)", n)
	}
	if got := testutil.ToFloat64(m.lastSuccess.WithLabelValues("a")); got != float64(t0.Add(time.Second).Unix()) {
		t.Errorf("last success = %v", got)
	}
	problems, err := testutil.GatherAndLint(m.Registry())
	if err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

func TestLintEachCollector(t *testing.T) {
	m := New(Sources{NextFires: func() map[string]time.Time { return nil }, HistoryFailed: func() int64 { return 0 }})
	for _, ev := range finish("a", "r1", run.OK, t0, time.Second) {
		m.Handle(ev)
	}
	m.Handle(run.Skip{Job: "a", Class: run.ClassPaused})
	m.Delivered("webhook", "dropped")
	for _, c := range m.own() {
		problems, err := testutil.CollectAndLint(c)
		if err != nil || len(problems) > 0 {
			t.Errorf("CollectAndLint: %v %v", problems, err)
		}
	}
}

func TestHealthz(t *testing.T) {
	for _, tc := range []struct {
		name  string
		alive bool
		code  int
	}{{"loop awake", true, 200}, {"loop stalled", false, 503}} {
		t.Run(tc.name, func(t *testing.T) {
			h := New(Sources{}).Handler(func() bool { return tc.alive })
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			if rec.Code != tc.code {
				t.Errorf("/healthz = %d, want %d", rec.Code, tc.code)
			}
		})
	}
}

// TestMetricsUsersLookFor: build info, per job the last failure and the
// failure streak (slots: an attempt that a retry follows is none, its
// amended end is), and whether and when jobs.yaml last loaded.
func TestMetricsUsersLookFor(t *testing.T) {
	m := New(Sources{})
	for _, ev := range finish("a", "r1", run.OK, t0, time.Second) {
		m.Handle(ev)
	}
	retried := run.End{Job: "a", RunID: "r2", Slot: t0, Started: t0.Add(time.Minute), Ended: t0.Add(61 * time.Second),
		Outcome: run.Failed, Attempt: 1, Retrying: true}
	m.Handle(retried)
	cut := retried
	cut.Retrying, cut.Amends, cut.Reason = false, true, "no retry: supervisor stopping"
	m.Handle(cut)
	for _, ev := range finish("a", "r3", run.Timeout, t0.Add(2*time.Minute), time.Second) {
		m.Handle(ev)
	}
	m.Handle(run.Reload{Time: t0.Add(3 * time.Minute), Jobs: 1})
	m.Handle(run.Reload{Time: t0.Add(4 * time.Minute), Jobs: 1, Problems: []string{"jobs.yaml:1:1: bad"}})
	want := `
# HELP cronvisor_runs_total Runs (attempts) that ended, by job and outcome.
# TYPE cronvisor_runs_total counter
cronvisor_runs_total{job="a",outcome="failed"} 1
cronvisor_runs_total{job="a",outcome="ok"} 1
cronvisor_runs_total{job="a",outcome="timeout"} 1
# HELP cronvisor_job_consecutive_failures The job's slots that ended failed, timeout or error in a row (0 after a success).
# TYPE cronvisor_job_consecutive_failures gauge
cronvisor_job_consecutive_failures{job="a"} 2
# HELP cronvisor_job_last_failure_timestamp_seconds When the job's last slot that ended failed, timeout or error ended (Unix time).
# TYPE cronvisor_job_last_failure_timestamp_seconds gauge
cronvisor_job_last_failure_timestamp_seconds{job="a"} ` + fmt.Sprintf("%g", float64(t0.Add(121*time.Second).Unix())) + `
# HELP cronvisor_config_last_reload_successful Whether the last load of jobs.yaml (start-up or reload) applied: 1, or 0 when it was refused.
# TYPE cronvisor_config_last_reload_successful gauge
cronvisor_config_last_reload_successful 0
# HELP cronvisor_config_last_reload_success_timestamp_seconds When jobs.yaml last loaded (start-up or reload) and applied (Unix time).
# TYPE cronvisor_config_last_reload_success_timestamp_seconds gauge
cronvisor_config_last_reload_success_timestamp_seconds ` + fmt.Sprintf("%g", float64(t0.Add(3*time.Minute).Unix())) + `
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "cronvisor_runs_total",
		"cronvisor_job_consecutive_failures", "cronvisor_job_last_failure_timestamp_seconds",
		"cronvisor_config_last_reload_successful", "cronvisor_config_last_reload_success_timestamp_seconds"); err != nil {
		t.Error(err)
	}
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range families {
		if f.GetName() == "cronvisor_build_info" {
			labels := map[string]string{}
			for _, l := range f.GetMetric()[0].GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			found = f.GetMetric()[0].GetGauge().GetValue() == 1 && labels["goversion"] == runtime.Version() &&
				labels["version"] != "" && labels["revision"] != ""
		}
	}
	if !found {
		t.Error("cronvisor_build_info{version,revision,goversion} 1 missing")
	}
}

// TestRunCost: what measured runs cost adds up per job and mode, the
// peak is the last measured one's, an OOM kill is counted; an unmeasured
// run and an amended end add nothing.
func TestRunCost(t *testing.T) {
	m := New(Sources{})
	end := func(job, id string, u run.Usage) run.End {
		return run.End{Job: job, RunID: id, Started: t0, Ended: t0.Add(time.Second), Outcome: run.OK, Usage: u}
	}
	first := end("a", "r1", run.Usage{Measured: true, CPUUser: 500 * time.Millisecond, CPUSystem: 250 * time.Millisecond, MemoryPeak: 64 << 20})
	amended := first
	amended.Amends = true
	for _, e := range []run.End{
		first,
		end("a", "r2", run.Usage{Measured: true, CPUUser: 1500 * time.Millisecond, MemoryPeak: 32 << 20, OOMKilled: true}),
		end("a", "r3", run.Usage{Measured: true, CPUUser: 250 * time.Millisecond}), // no memory controller: the peak stays
		amended,
		end("b", "r4", run.Usage{}), // not measured
	} {
		m.Handle(e)
	}
	want := `
# HELP cronvisor_run_cpu_seconds_total CPU time the job's runs used, by mode (user, system); runs outside a cgroup are not measured.
# TYPE cronvisor_run_cpu_seconds_total counter
cronvisor_run_cpu_seconds_total{job="a",mode="system"} 0.25
cronvisor_run_cpu_seconds_total{job="a",mode="user"} 2.25
# HELP cronvisor_run_memory_peak_bytes Peak memory of the job's last run whose peak was measured (the memory controller is on).
# TYPE cronvisor_run_memory_peak_bytes gauge
cronvisor_run_memory_peak_bytes{job="a"} 3.3554432e+07
# HELP cronvisor_runs_oom_killed_total Runs of the job in which the kernel's OOM killer killed a process.
# TYPE cronvisor_runs_oom_killed_total counter
cronvisor_runs_oom_killed_total{job="a"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "cronvisor_run_cpu_seconds_total",
		"cronvisor_run_memory_peak_bytes", "cronvisor_runs_oom_killed_total"); err != nil {
		t.Error(err)
	}
	problems, err := testutil.GatherAndLint(m.Registry())
	if err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}
