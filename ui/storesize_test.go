package ui

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"cronvisor/internal/ctl"
)

// hourlyJobs is n jobs as a daemon reports hourly jobs that have not run
// yet: each string a separate allocation, as the decoder makes them.
func hourlyJobs(n int) []ctl.JobStatus {
	since := ref.Add(-time.Hour)
	jobs := make([]ctl.JobStatus, n)
	for i := range jobs {
		name := fmt.Sprintf("job%05d", i)
		jobs[i] = ctl.JobStatus{Name: name, Schedule: fmt.Sprintf("%d * * * *", 30), Timezone: string([]byte("Local")),
			State: ctl.JobState([]byte("idle")), Enabled: true, NextRun: ref.Add(30 * time.Minute),
			Lock: string([]byte(name)), Counts: ctl.Counts{Since: since}}
	}
	return jobs
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestStoreKeepsCompactRows: what the store keeps of 10,000 idle jobs
// (rows, index, next fires) stays far under the decoded statuses' size,
// so that an attached console's heap follows what it shows.
func TestStoreKeepsCompactRows(t *testing.T) {
	const n = 10000
	before := heapInUse()
	s := newStore()
	s.setJobs(hourlyJobs(n))
	perJob := float64(heapInUse()-before) / n
	runtime.KeepAlive(s)
	t.Logf("%.0f bytes a job kept", perJob)
	if perJob > 300 {
		t.Errorf("the store keeps %.0f bytes a job, want at most 300", perJob)
	}
}

// TestStoreKeepsLearnedCompact: a job's learned durations (16 recent
// runs, the figures, no advice) add about a hundred bytes to its row,
// not the decoded ctl.Durations' few hundred.
func TestStoreKeepsLearnedCompact(t *testing.T) {
	const n = 10000
	kept := func(jobs []ctl.JobStatus) float64 {
		before := heapInUse()
		s := newStore()
		s.setJobs(jobs)
		perJob := float64(heapInUse()-before) / n
		runtime.KeepAlive(s)
		runtime.KeepAlive(jobs) // what the store shares with them is not its own
		return perJob
	}
	jobs := hourlyJobs(n)
	bare := kept(jobs)
	for i := range jobs {
		recent := make([]int64, recentMax)
		for k := range recent {
			recent[k] = int64(1000 + 10*k + i%7)
		}
		jobs[i].Durations = &ctl.Durations{Runs: 50, P5MS: 1000, P50MS: 1080, P95MS: 1150, P99MS: 1160, MaxMS: 1170,
			SuggestedTimeoutMS: 70000, RecentMS: recent}
	}
	learned := kept(jobs)
	t.Logf("%.0f bytes a job kept, %.0f with durations", bare, learned)
	if learned-bare > 128 {
		t.Errorf("learned durations add %.0f bytes a job, want at most 128", learned-bare)
	}
}
