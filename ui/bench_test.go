package ui

import (
	"fmt"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"cronvisor/internal/base/run"
	"cronvisor/internal/ctl"
)

// manyJobs is a snapshot of n jobs in every state, a tenth of them running
// and holding their lock.
func manyJobs(n int) []ctl.JobStatus {
	states := []ctl.JobState{ctl.StateIdle, ctl.StateRunning, ctl.StateQueued, ctl.StatePaused, ctl.StateDisabled}
	outcomes := []run.Outcome{"ok", "failed", "skipped", "timeout", ""}
	jobs := make([]ctl.JobStatus, n)
	for i := range jobs {
		j := ctl.JobStatus{Name: fmt.Sprintf("job_%04d", i), Schedule: "*/5 * * * *", Timezone: "UTC",
			State: states[i%len(states)], Enabled: true, LastOutcome: outcomes[i%len(outcomes)],
			LastEndedAt: at(-time.Duration(i) * time.Second), NextRun: at(time.Duration(i) * time.Second),
			Lock: fmt.Sprintf("job_%04d", i), Counts: ctl.Counts{Runs: i, Skips: i / 3, Failures: i / 7}}
		if j.State == ctl.StateRunning {
			j.PID, j.RunID, j.StartedAt, j.Deadline = 10000+i, fmt.Sprintf("r-%d", i), at(-time.Minute), at(time.Minute)
			j.Holder = &run.Holder{PID: j.PID, Host: host, Job: j.Name, RunID: j.RunID, Since: j.StartedAt}
		}
		jobs[i] = j
	}
	return jobs
}

// BenchmarkViewJobs renders the jobs table of 1,000 jobs; one View must
// stay well under 10 ms so that a redraw a second costs nothing.
func BenchmarkViewJobs(b *testing.B) {
	benchViewJobs(b, manyJobs(1000))
}

// BenchmarkViewJobsLearned is BenchmarkViewJobs with a sparkline on
// every row: each job has 16 recent runs learned.
func BenchmarkViewJobsLearned(b *testing.B) {
	jobs := manyJobs(1000)
	for i := range jobs {
		recent := make([]int64, recentMax)
		for k := range recent {
			recent[k] = int64(1000 + (k*37+i)%400)
		}
		jobs[i].Durations = &ctl.Durations{Runs: 50, P5MS: 1000, P50MS: 1200, P95MS: 1350, P99MS: 1390, MaxMS: 1400, RecentMS: recent}
	}
	benchViewJobs(b, jobs)
}

func benchViewJobs(b *testing.B, jobs []ctl.JobStatus) {
	f := newFake()
	f.jobs = jobs
	m := New(f, Options{Title: sockPath, Clock: fixedClock})
	m, _ = m.update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m, _ = m.update(snapshotMsg{jobs: f.jobs, locks: f.locks, withLocks: true})
	m, _ = m.update(keyMsg("pgdown")) // somewhere in the middle
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkEventBurst applies a burst of 256 output lines and a state
// change to the model with 1,000 jobs, the work of one coalesced message.
func BenchmarkEventBurst(b *testing.B) {
	f := newFake()
	f.jobs = manyJobs(1000)
	m := New(f, Options{Title: sockPath, Clock: fixedClock})
	m, _ = m.update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m, _ = m.update(snapshotMsg{jobs: f.jobs, locks: f.locks, withLocks: true})
	evs := make([]ctl.WireEvent, maxBatch)
	for i := range evs {
		evs[i] = ctl.WireEvent{Type: ctl.EventRunOutput, Job: "job_0001", Stream: "stdout", Line: "a line of output"}
	}
	evs[len(evs)-1] = ctl.WireEvent{Type: ctl.EventRunSkipped, Job: "job_0001", Slot: ref}
	ch := make(chan ctl.WireEvent)
	m.events = ch
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m, _ = m.update(eventsMsg{ch: ch, events: evs})
	}
}
