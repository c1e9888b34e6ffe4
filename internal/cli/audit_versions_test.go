package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/store/history"
)

// TestAuditReadsTheSchedulesVersions: audit reads the versions a daemon
// recorded in the state dir's store and judges each slot by the one in
// force at its instant: a schedule edited at 10:05 (*/10 before, 5-59/10
// after) leaves every slot ran, where today's schedule alone would miss
// 09:45 and 09:55.
func TestAuditReadsTheSchedulesVersions(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "jobs.yaml")
	body := "state_dir: state\njobs:\n  - {name: a, schedule: \"5-59/10 * * * *\", timezone: UTC, command: [/bin/true], timeout: 1m}\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	store, err := history.Open(statedir.Dir(filepath.Join(dir, "state")).History())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, v := range []struct {
		at   int
		expr string
	}{{0, "*/10 * * * *"}, {5, "5-59/10 * * * *"}} {
		vs := []run.ScheduleVersion{{Job: "a", Schedule: v.expr, Zone: "UTC", Enabled: true}}
		if _, err := store.RecordSchedules(ctx, hm(10, v.at), "host-a", vs); err != nil {
			t.Fatal(err)
		}
	}
	for _, slot := range []int{-20, -10, 0, 5, 15, 25} {
		at := hm(10, 0).Add(time.Duration(slot) * time.Minute)
		r := run.Record{Job: "a", RunID: "r" + at.Format("1504"), Outcome: run.OK, ScheduledAt: at, StartedAt: at,
			EndedAt: at.Add(1e9), Host: "host-a", Attempt: 1}
		if err := store.Finish(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()
	code, out, stderr := runAuditAt(t, path, auditFlags{since: "1h"})
	if want := "ran 6, skipped 0, missed 0, duplicated 0, open 0"; code != 0 || !strings.Contains(out, "a: "+want) || strings.Contains(out, "off the schedule") {
		t.Errorf("audit: exit %d, stdout:\n%s\nstderr: %s\nwant exit 0 and a: %s", code, out, stderr, want)
	}
}
