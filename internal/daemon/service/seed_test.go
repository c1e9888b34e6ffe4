package service

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/lock/file"
	"cronvisor/internal/store/history"
	"cronvisor/runner"
)

// TestNewSeedsLastOutcomesFromHistory checks that a new service shows each
// job's newest record from before it started.
func TestNewSeedsLastOutcomesFromHistory(t *testing.T) {
	dir := t.TempDir()
	store, err := history.Open(filepath.Join(dir, "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	at := func(m int) time.Time { return time.Date(2026, 6, 1, 12, m, 0, 0, time.UTC) }
	ctx := context.Background()
	for _, r := range []run.Record{
		{Job: "a", RunID: "a1", Outcome: run.Failed, ScheduledAt: at(0), StartedAt: at(0), EndedAt: at(1)},
		{Job: "a", RunID: "a2", Outcome: run.OK, ScheduledAt: at(5), StartedAt: at(5), EndedAt: at(6)},
		{Job: "b", RunID: "b1", Outcome: run.Skipped, ScheduledAt: at(7)},
		{Job: "d", RunID: "d1", Outcome: run.OK, ScheduledAt: at(2), StartedAt: at(2), EndedAt: at(3)},
		{Job: "d", RunID: "d2", Outcome: run.Skipped, ScheduledAt: at(4)},
		{Job: "gone", RunID: "g1", Outcome: run.OK, ScheduledAt: at(8), StartedAt: at(8), EndedAt: at(9)},
	} {
		if err := store.Finish(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	locker := file.NewLocker(filepath.Join(dir, "locks"), runner.InRun)
	sup := runner.NewSupervisor(locker, runner.NopRecorder{}, func(run.Event) {})
	cfg := &config.Config{Jobs: []config.Job{job(t, "a", true), job(t, "b", true), job(t, "c", true), job(t, "d", true)}}
	s, err := New(sup, locker, cfg, WithStore(store), WithRecent(ReadRecent(ctx, store, cfg.Jobs)))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		job          string
		outcome      run.Outcome
		started, end time.Time
	}{
		{"a", run.OK, at(5), at(6)},
		{"b", run.Skipped, time.Time{}, time.Time{}},
		{"c", "", time.Time{}, time.Time{}},
		// Skipped after its last run: the last start is that run's.
		{"d", run.Skipped, at(2), time.Time{}},
	}
	for _, tc := range tests {
		t.Run(tc.job, func(t *testing.T) {
			js := stateOf(t, s, tc.job)
			if js.LastOutcome != tc.outcome || !js.LastStartedAt.Equal(tc.started) || !js.LastEndedAt.Equal(tc.end) {
				t.Errorf("last %q %v..%v, want %q %v..%v", js.LastOutcome, js.LastStartedAt, js.LastEndedAt,
					tc.outcome, tc.started, tc.end)
			}
		})
	}
}

// TestStoredRunsLastSlots: the scheduler's catch_up reads each job's last
// slot from the same start-up read as the status, and a job without one is
// absent, as Store.LastSlots has it.
func TestStoredRunsLastSlots(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 3, 1, 10, m, 0, 0, time.UTC) }
	recent := StoredRuns{
		"a": {Outcome: run.OK, LastSlot: at(5)},
		"b": {Outcome: run.Skipped, LastSlot: at(7)},
		"m": {Outcome: run.OK}, // only manual runs: no slot
	}
	got, err := recent.LastSlots(context.Background(), []string{"a", "b", "m", "unknown"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got["a"].Equal(at(5)) || !got["b"].Equal(at(7)) {
		t.Errorf("LastSlots = %v, want a at %v and b at %v only", got, at(5), at(7))
	}
	var none StoredRuns // history unreadable at start-up
	if got, err := none.LastSlots(context.Background(), []string{"a"}); err != nil || len(got) != 0 {
		t.Errorf("LastSlots of nothing read = %v, %v; want empty", got, err)
	}
}
