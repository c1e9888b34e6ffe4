package history

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// pruneFixture is job a: ok runs on days 0..5 (day 5 manual), a failed
// fire on day 6 and a skip on day 7, each with a log file; job b: one old
// ok run (day 0); job c: a run open since day 1.
func pruneFixture(t *testing.T) (*Store, string) {
	s, _ := openTemp(t)
	dir := t.TempDir()
	day := func(d int) time.Time { return base().Add(time.Duration(d) * 24 * time.Hour) }
	add := func(r run.Record) {
		l, err := NewLog(dir, r.Job, r.RunID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(l.Write("stdout", "hi"), l.Close()); err != nil {
			t.Fatal(err)
		}
		r.LogPath = l.Path()
		if r.Outcome == run.Running {
			if err := s.Start(t.Context(), r); err != nil {
				t.Fatal(err)
			}
			return
		}
		mustRun(t, s, r)
	}
	for d := range 6 {
		add(run.Record{Job: "a", RunID: "a" + strconv.Itoa(d), Outcome: run.OK, ScheduledAt: day(d), Manual: d == 5})
	}
	add(run.Record{Job: "a", RunID: "a6", Outcome: run.Failed, ScheduledAt: day(6)})
	add(run.Record{Job: "a", RunID: "a7", Outcome: run.Skipped, ScheduledAt: day(7)})
	add(run.Record{Job: "b", RunID: "b0", Outcome: run.OK, ScheduledAt: day(0)})
	add(run.Record{Job: "c", RunID: "c1", Outcome: run.Running, ScheduledAt: day(1)})
	return s, dir
}

func TestPrune(t *testing.T) {
	now := base().Add(8 * 24 * time.Hour)
	all := []string{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "b0", "c1"}
	tests := []struct {
		name     string
		keepRuns int
		keepAge  time.Duration
		want     []string // rows left
	}{
		{"no limits", 0, 0, all},
		// a7 is a's last scheduled fire, a5 its last ok: kept anyway.
		{"keep 2 per job", 2, 0, []string{"a5", "a6", "a7", "b0", "c1"}},
		{"keep 4 days", 0, 4 * 24 * time.Hour, []string{"a4", "a5", "a6", "a7", "b0", "c1"}},
		{"either limit", 3, 3*24*time.Hour + time.Minute, []string{"a5", "a6", "a7", "b0", "c1"}},
		{"generous", 100, 30 * 24 * time.Hour, all},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := pruneFixture(t)
			ctx := testCtx(t)
			removed, err := s.Prune(ctx, tc.keepRuns, tc.keepAge, now)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Query(ctx, Filter{})
			if err != nil {
				t.Fatal(err)
			}
			left := runIDs(got)
			sort.Strings(left)
			if !reflect.DeepEqual(left, tc.want) || removed != len(all)-len(tc.want) {
				t.Errorf("left %v (removed %d), want %v", left, removed, tc.want)
			}
			logs, _ := filepath.Glob(filepath.Join(dir, "logs", "*", "*.log"))
			var names []string
			for _, l := range logs {
				names = append(names, filepath.Base(l[:len(l)-len(".log")]))
			}
			sort.Strings(names)
			if !reflect.DeepEqual(names, tc.want) {
				t.Errorf("log files %v, want %v", names, tc.want)
			}
		})
	}
}

func TestPruneLeavesNonFiles(t *testing.T) {
	s, _ := openTemp(t)
	dir := t.TempDir() // a damaged record naming a directory as its log
	mustRun(t, s, run.Record{Job: "a", RunID: "1", Outcome: run.Failed, ScheduledAt: minute(0), LogPath: dir})
	mustRun(t, s, run.Record{Job: "a", RunID: "2", Outcome: run.OK, ScheduledAt: minute(1)})
	removed, err := s.Prune(testCtx(t), 1, 0, minute(2))
	if removed != 1 || err == nil {
		t.Errorf("Prune = %d, %v; want 1 and an error about %s", removed, err, dir)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("directory removed: %v", err)
	}
}

// A prune hands the space of the rows it removed back to the file system
// (auto_vacuum incremental, on every store created since): the file of
// 6,000 records (two of Prune's batches) shrinks to a fraction once all
// but the newest are pruned, and no free page is left.
func TestPruneGivesTheSpaceBack(t *testing.T) {
	s, path := openTemp(t)
	ctx := testCtx(t)
	db, err := s.reader()
	if err != nil {
		t.Fatal(err)
	}
	// Seeded in one statement: 6,000 commits of the writer take seconds.
	if _, err := db.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 6000)
		INSERT INTO runs (run_id, job, outcome, at, scheduled_at, reason)
		SELECT 'r' || i, 'a', 'skipped', ?1 + i * 60000000000, ?1 + i * 60000000000, printf('%.200c', 'x') FROM n`,
		base().UnixNano()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	full := fileSize(t, path)
	n, err := s.Prune(ctx, 10, 0, minute(6001))
	if err != nil || n != 5990 {
		t.Fatalf("pruned %d, %v; want 5,990, nil", n, err)
	}
	var free int
	if err := db.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&free); err != nil || free != 0 {
		t.Errorf("%d free pages left (%v), want 0", free, err)
	}
	if _, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	if after := fileSize(t, path); after > full/4 {
		t.Errorf("file %d bytes after pruning, %d before: want it given back (under a quarter)", after, full)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
