package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// benchRows is the size of the store BenchmarkSkipsLast24h queries:
// CRONVISOR_BENCH_ROWS, default 1,000,000. CI smoke runs with -benchtime=1x
// may lower it to stay cheap.
func benchRows(b *testing.B) int {
	n := 1_000_000
	if v := os.Getenv("CRONVISOR_BENCH_ROWS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("CRONVISOR_BENCH_ROWS=%q: want a positive integer", v)
		}
	}
	return n
}

// openSync opens a migrated store with the given synchronous mode, to
// compare FULL (the choice) with NORMAL.
func openSync(b *testing.B, sync string) *Store {
	p := filepath.Join(b.TempDir(), "history.db")
	h, err := openDSN(dsn(p, sync, "rwc"))
	if err != nil {
		b.Fatal(err)
	}
	if err := h.setup(context.Background()); err != nil {
		b.Fatal(err)
	}
	if err := h.prepare(); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	if h.id, err = statID(fi); err != nil {
		b.Fatal(err)
	}
	s := &Store{path: p}
	s.h.Store(h)
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkInsert is the cost of recording one finished run (one commit).
// With shipping on (history_backend: postgres), the outbox's trigger adds
// a row to each commit.
func BenchmarkInsert(b *testing.B) {
	for _, tc := range []struct {
		sync string
		ship bool
	}{{synchronousMode, false}, {"NORMAL", false}, {synchronousNoSync, false}, {synchronousMode, true}} {
		name := "synchronous=" + tc.sync
		if tc.ship {
			name += "/shipping"
		}
		b.Run(name, func(b *testing.B) {
			s := openSync(b, tc.sync)
			ctx := context.Background()
			if err := s.SetShipping(ctx, tc.ship); err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				i++
				r := run.Record{Job: "job", RunID: strconv.Itoa(i), Outcome: run.OK, ScheduledAt: minute(i),
					StartedAt: minute(i), EndedAt: minute(i).Add(time.Second), ExitCode: intp(0), Host: "h"}
				if err := s.Finish(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

const benchJobs = 100

// buildBig fills s with n rows in one transaction through one prepared
// statement: benchJobs jobs firing every 5 minutes up to end, about one fire
// in five skipped (with a holder), the rest mostly ok.
func buildBig(b *testing.B, s *Store, n int, end time.Time) {
	ctx := context.Background()
	tx, err := s.h.Load().db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, insertSQL)
	if err != nil {
		b.Fatal(err)
	}
	fires := (n + benchJobs - 1) / benchJobs
	for i := range n {
		k, j := i/benchJobs, i%benchJobs
		slot := end.Add(-time.Duration(fires-k) * 5 * time.Minute)
		r := run.Record{Job: fmt.Sprintf("job-%03d", j), RunID: strconv.Itoa(i),
			ScheduledAt: slot, Host: "h", SupervisorPID: 1}
		switch h := (k*37 + j*11) % 100; { // every job gets every residue
		case h < 20:
			r.Outcome, r.Reason = run.Skipped, "lock held"
			r.Holder = &run.Holder{PID: 4242, Host: "h", Job: r.Job, RunID: strconv.Itoa(i - benchJobs), Since: slot}
		case h < 28:
			r.Outcome, r.ExitCode = run.Failed, intp(1)
		default:
			r.Outcome, r.ExitCode = run.OK, intp(0)
		}
		if r.Outcome != run.Skipped {
			r.StartedAt, r.EndedAt = slot, slot.Add(3*time.Second)
			r.LogPath = "/state/logs/" + r.Job + "/" + r.RunID + ".log"
		}
		if _, err := stmt.ExecContext(ctx, args(r)...); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSkipsLast24h queries the skips of one job in the last 24 hours
// of a store of benchRows rows (and the overlap view of the same); each
// must stay under 50 ms.
func BenchmarkSkipsLast24h(b *testing.B) {
	n := benchRows(b)
	s := openSync(b, synchronousMode)
	end := base()
	t0 := time.Now()
	buildBig(b, s, n, end)
	b.Logf("built %d rows in %v", n, time.Since(t0).Round(time.Millisecond))
	f := Filter{Job: "job-042", Outcomes: []run.Outcome{run.Skipped}, Since: end.Add(-24 * time.Hour)}
	ctx := context.Background()
	cases := []struct {
		name string
		run  func() (int, error)
	}{
		{"Query", func() (int, error) { rs, err := s.Query(ctx, f); return len(rs), err }},
		{"Overlaps", func() (int, error) { os, err := s.Overlaps(ctx, f); return len(os), err }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var got int
			for b.Loop() {
				var err error
				if got, err = c.run(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(got), "results")
			if per := b.Elapsed() / time.Duration(b.N); per > 50*time.Millisecond {
				b.Errorf("%s took %v per query, over 50ms", c.name, per)
			}
		})
	}
}

// BenchmarkStartFinish is the cost of one run's two records, each its own
// commit as at a low fire rate: the start's insert, then the end's update
// of the same row, in a store already holding a few thousand rows.
func BenchmarkStartFinish(b *testing.B) {
	for _, d := range run.Durabilities() {
		b.Run("durability="+string(d), func(b *testing.B) { startFinish(b, synchronousFor(d)) })
	}
}

func startFinish(b *testing.B, sync string) {
	s, ctx := bigStore(b, sync)
	i := 0
	for b.Loop() {
		i++
		r := benchRun("sf", i)
		if err := s.Start(ctx, r); err != nil {
			b.Fatal(err)
		}
		r.Outcome, r.EndedAt, r.ExitCode = run.OK, minute(i).Add(time.Second), intp(0)
		if err := s.Finish(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWholeRun is the cost of a short run's one row, its start
// folded into its end as the Writer does: inserted at once (folded), or
// after a look-up of the start's row as a plain Finish does (lookedUp).
func BenchmarkWholeRun(b *testing.B) {
	for _, folded := range []bool{true, false} {
		b.Run(map[bool]string{true: "folded", false: "lookedUp"}[folded], func(b *testing.B) {
			s, ctx := bigStore(b, synchronousFor(run.DurabilityProcess))
			i := 0
			for b.Loop() {
				i++
				r := benchRun("w", i)
				r.Outcome, r.EndedAt, r.ExitCode = run.OK, minute(i).Add(time.Second), intp(0)
				if errs := s.Apply(ctx, []Write{{Kind: WriteFinish, Record: r, noStart: folded}}); errs[0] != nil {
					b.Fatal(errs[0])
				}
			}
		})
	}
}

// bigStore is a store holding a few thousand rows, as the runs'
// benchmarks write into.
func bigStore(b *testing.B, sync string) (*Store, context.Context) {
	s := openSync(b, sync)
	buildBig(b, s, 5000, minute(0))
	return s, context.Background()
}

// benchRun is the start of run i of a benchmark's job, its id prefix-i.
func benchRun(prefix string, i int) run.Record {
	id := prefix + "-" + strconv.Itoa(i)
	return run.Record{Job: "job-007", RunID: id, ScheduledAt: minute(i), StartedAt: minute(i),
		Host: "h", SupervisorPID: 1, PID: 4242, LogPath: "/state/logs/job-007/" + id + ".log"}
}
