package plan

import (
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/durations"
	"cronvisor/internal/config"
)

// jobsOf parses a jobs.yaml's text.
func jobsOf(t *testing.T, yaml string) []config.Job {
	t.Helper()
	cfg, problems := config.Parse(t.TempDir()+"/jobs.yaml", []byte("defaults:\n  timeout: 1h\n"+yaml))
	if cfg == nil {
		t.Fatalf("jobs.yaml refused: %v", problems)
	}
	return cfg.Jobs
}

// runsOf is the figures of n successful runs of took each.
func runsOf(n int, took time.Duration, now time.Time) durations.Stats {
	samples := make([]durations.Sample, n)
	for i := range samples {
		samples[i] = durations.Sample{Took: took, Ended: now.Add(-time.Duration(i) * time.Hour)}
	}
	return durations.Compute(samples)
}

var from = time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)

func TestPlanPredictsASkipEveryOtherFire(t *testing.T) {
	jobs := jobsOf(t, "jobs:\n  - name: sync\n    schedule: '*/5 * * * *'\n    timezone: UTC\n    command: 'true'\n")
	p := Plan(jobs, Options{From: from, Window: 24 * time.Hour, Stats: map[string]durations.Stats{"sync": runsOf(20, 7*time.Minute, from)}})[0]
	if p.FireCount != 288 || p.Expect == nil {
		t.Fatalf("plan = %d fires, expect %+v; want 288 fires and a prediction", p.FireCount, p.Expect)
	}
	if p.Expect.Runs != 144 || p.Expect.Skipped != 144 {
		t.Errorf("expect %+v, want 144 runs and 144 skipped", *p.Expect)
	}
	want := "a skip every other fire (144 of 288 skipped): runs take 7m0s (p95 of 20) and fires come every 5m0s; overlap: skip"
	if len(p.Findings) == 0 || p.Findings[0].Kind != "skips" || p.Findings[0].Text != want {
		t.Errorf("findings = %+v, want first %q", p.Findings, want)
	}
}

func TestPlanPredictsNothingFromTooFewRuns(t *testing.T) {
	jobs := jobsOf(t, "jobs:\n  - name: sync\n    schedule: '*/5 * * * *'\n    command: 'true'\n")
	p := Plan(jobs, Options{From: from, Window: time.Hour, Stats: map[string]durations.Stats{"sync": runsOf(durations.MinSamples-1, 7*time.Minute, from)}})[0]
	if p.Measured != nil || p.Expect != nil || len(p.Findings) != 0 {
		t.Errorf("with %d runs: measured %+v, expect %+v, findings %+v; want none", durations.MinSamples-1, p.Measured, p.Expect, p.Findings)
	}
}

func TestPlanNamesTheSpringForwardEdge(t *testing.T) {
	jobs := jobsOf(t, "jobs:\n  - name: nightly\n    schedule: '30 2 * * *'\n    timezone: Europe/Berlin\n    command: 'true'\n")
	berlin, _ := time.LoadLocation("Europe/Berlin")
	p := Plan(jobs, Options{From: time.Date(2027, 3, 27, 12, 0, 0, 0, berlin), Window: 24 * time.Hour})[0]
	if len(p.Edges) != 1 || p.Edges[0].Change != "spring forward" || p.Edges[0].JumpS != 3600 {
		t.Fatalf("edges = %+v, want Berlin's spring forward", p.Edges)
	}
	want := "spring forward at 2027-03-28 03:00 CEST: 02:30 does not exist on 2027-03-28 in Europe/Berlin; runs at 03:00 instead"
	if !hasFinding(p.Findings, "dst", want) {
		t.Errorf("findings = %+v, want %q", p.Findings, want)
	}
	if len(p.Fires) != 1 || p.Fires[0].Slot.In(berlin).Format("15:04 MST") != "03:00 CEST" {
		t.Errorf("fires = %+v, want the one moved to 03:00 CEST", p.Fires)
	}
}

func TestPlanCallsOutContradictions(t *testing.T) {
	jobs := jobsOf(t, `jobs:
  - name: q
    schedule: '* * * * *'
    command: 'true'
    overlap: queue
  - name: short
    schedule: '0 * * * *'
    command: 'true'
    timeout: 5m
  - name: late
    schedule: '*/5 * * * *'
    command: 'true'
    catch_up: 1h
`)
	stats := map[string]durations.Stats{"q": runsOf(10, 3*time.Minute, from), "short": runsOf(10, 7*time.Minute, from)}
	ps := Plan(jobs, Options{From: from, Window: time.Hour, Stats: stats})
	if !hasFinding(ps[0].Findings, "queue", "the queue cannot drain: runs take 3m0s (p95 of 10) and fires come every 1m0s; one fire always waits (up to 3m0s), 39 fires skipped as the queue is full") {
		t.Errorf("queue findings = %+v", ps[0].Findings)
	}
	if e := ps[0].Expect; e.Runs != 20 || e.Queued != 19 || e.Skipped != 39 {
		t.Errorf("queue expect = %+v, want 20 runs, 19 of them queued, 39 skipped (and one waiting at the end)", *e)
	}
	if !hasFinding(ps[1].Findings, "timeout", "timeout 5m0s is below the p95 of its runs (7m0s): most runs would end timeout") || ps[1].Expect.TimedOut != 1 {
		t.Errorf("timeout findings = %+v, expect %+v", ps[1].Findings, *ps[1].Expect)
	}
	if !hasFinding(ps[2].Findings, "catch_up", "catch_up 1h0m0s is longer than the period (5m0s): after downtime only the newest missed slot runs (up to 1h0m0s old), the others are recorded missed") {
		t.Errorf("catch_up findings = %+v", ps[2].Findings)
	}
}

func TestDiffListsAddedSlots(t *testing.T) {
	old := jobsOf(t, "jobs:\n  - name: sync\n    schedule: '*/10 * * * *'\n    command: 'true'\n")
	new := jobsOf(t, "jobs:\n  - name: sync\n    schedule: '*/5 * * * *'\n    command: 'true'\n    catch_up: 2h\n")
	now := from.Add(7 * time.Minute)
	ds := Diff(old, new, Options{From: now, Window: 24 * time.Hour})
	if len(ds) != 1 || len(ds[0].Added) != 144 || len(ds[0].Removed) != 0 {
		t.Fatalf("diff = %d jobs, %d added, %d removed; want 1 job, 144 added, 0 removed", len(ds), len(ds[0].Added), len(ds[0].Removed))
	}
	want := "catch_up 0s → 2h0m0s: a start-up now would run the slot 2026-12-04T00:05:00Z (2m0s ago) at once if no host ran it; the reload itself does not"
	if ds[0].OnStart != want {
		t.Errorf("on start = %q, want %q", ds[0].OnStart, want)
	}
	if got := Summary(ds, 24*time.Hour); got != "1 job changed, 0 added, 0 removed; +144 -0 slots in 24h; fires at reload: none" {
		t.Errorf("summary = %q", got)
	}
}

func hasFinding(fs []Finding, kind, text string) bool {
	for _, f := range fs {
		if f.Kind == kind && strings.TrimSpace(f.Text) == text {
			return true
		}
	}
	return false
}

func TestPlanMarksCalendarDays(t *testing.T) {
	jobs := jobsOf(t, "calendars: {holidays: [2026-12-25]}\njobs:\n  - name: payroll\n    schedule: '0 9 * * *'\n    timezone: UTC\n    command: 'true'\n    skip_on: holidays\n")
	p := Plan(jobs, Options{From: time.Date(2026, 12, 24, 0, 0, 0, 0, time.UTC), Window: 72 * time.Hour})[0]
	if len(p.Fires) != 3 || p.Fires[0].Skipped != "" || p.Fires[1].Skipped != "calendar holidays (2026-12-25)" || p.Fires[2].Skipped != "" {
		t.Fatalf("fires = %+v, want the 25th's skipped by the calendar", p.Fires)
	}
	if !hasFinding(p.Findings, "calendar", "1 slot on its calendars' days recorded skipped, the first 2026-12-25 09:00 UTC: calendar holidays (2026-12-25)") {
		t.Errorf("findings = %+v", p.Findings)
	}
}
