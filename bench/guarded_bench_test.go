package bench

import (
	"context"
	"log/slog"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/lock/file"
	"cronvisor/internal/store/history"
	"cronvisor/runner"
)

// rig is a supervisor wired as the daemon wires it: a file.Locker, the
// history Writer on a real store (synchronous=FULL, or OFF for
// durability: process) and the last-ok cursor read from it. Only the
// daemon's slog listener is missing.
type rig struct {
	sup     *runner.Supervisor
	fan     *runner.Fanout
	started chan time.Time // run.Start times, when a benchmark asks for them
	failed  atomic.Int64   // runs that did not end ok
}

func newRig(b *testing.B, withStarts bool, d run.Durability) *rig {
	b.Helper()
	dir := b.TempDir()
	store, err := history.Open(filepath.Join(dir, "history.db"), history.WithDurability(d))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	fan := &runner.Fanout{}
	r := &rig{fan: fan}
	starts := &runner.Starts{}
	hist := history.NewWriter(history.WriterConfig{Store: store, StateDir: dir, LogLimit: 1 << 20,
		Log: slog.New(failHandler{b}), Pending: starts.Pending})
	b.Cleanup(func() { hist.Close() })
	if withStarts {
		r.started = make(chan time.Time, 1)
		fan.Listen(func(ev run.Event) {
			if s, ok := ev.(run.Start); ok {
				r.started <- s.Started
			}
		})
	}
	locker := file.NewLocker(filepath.Join(dir, "locks"), runner.InRun, file.WithDurability(d))
	r.sup = runner.NewSupervisor(locker, hist, fan.Emit,
		runner.WithLastOK(store.LastOKSlot), runner.WithStarts(starts))
	return r
}

// trueJob runs /bin/true under a lock of its own.
func trueJob(name string) config.Job {
	return config.Job{Name: name, Command: []string{"/bin/true"}, Timeout: time.Minute,
		KillGrace: time.Second, Overlap: config.OverlapSkip, Lock: name, Enabled: true}
}

// fire fires job for the slot after *slot (each scheduled fire needs a
// new slot: the lock's cursor refuses a slot twice) and counts the runs
// that did not end ok in r.failed. /bin/true always succeeds, but with
// concurrent runs proc can take another run's child, caught between fork
// and exec, for one of the ending run's processes and SIGTERM it; the
// benchmark reports how often instead of stopping (see BENCHMARKS.md).
func (r *rig) fire(job config.Job, slot *time.Time) run.End {
	*slot = slot.Add(time.Second)
	f := r.sup.Fire(context.Background(), job, *slot, false)
	if f.Outcome != run.OK {
		r.failed.Add(1)
	}
	return f
}

// reportFailed reports the runs that did not end ok, and fails the
// benchmark beyond the rare fork-exec race (one run in a hundred).
func (r *rig) reportFailed(b *testing.B) {
	n := r.failed.Load()
	b.ReportMetric(float64(n), "failed-runs")
	if n > int64(b.N/100) {
		b.Fatalf("%d of %d runs did not end ok", n, b.N)
	}
}

func bareTrue(b *testing.B) {
	if err := exec.Command("/bin/true").Run(); err != nil {
		b.Fatal(err)
	}
}

// cpuTime is this process's own user+system CPU so far (children's not
// included): the supervisor's cost, without the job's.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkGuardedRuns is the throughput of short guarded runs (lock,
// fork/exec, wait, /proc checks, two history commits) against bare
// exec.Command("/bin/true").Run(), one at a time and two at once, in
// both durability modes (guarded: machine, guarded-process: process).
// The ratio of their runs/s is the figure BENCHMARKS.md compares.
func BenchmarkGuardedRuns(b *testing.B) {
	for _, workers := range []int{1, 2} {
		b.Run("bare/workers="+strconv.Itoa(workers), func(b *testing.B) {
			measureRuns(b, workers, func(int) func() { return func() { bareTrue(b) } })
		})
		for _, d := range run.Durabilities() {
			name := "guarded"
			if d != run.DurabilityMachine {
				name += "-" + string(d)
			}
			b.Run(name+"/workers="+strconv.Itoa(workers), func(b *testing.B) {
				r := newRig(b, false, d)
				measureRuns(b, workers, func(w int) func() {
					job, slot := trueJob("job"+strconv.Itoa(w)), time.Now()
					return func() { r.fire(job, &slot) }
				})
				r.reportFailed(b)
			})
		}
	}
}

// measureRuns runs b.N operations split over workers goroutines, each
// with its own operation from newOp, and reports runs/s and this
// process's CPU per run.
func measureRuns(b *testing.B, workers int, newOp func(worker int) func()) {
	ops := make([]func(), workers)
	for w := range ops {
		ops[w] = newOp(w)
	}
	cpu0 := cpuTime(b)
	b.ResetTimer()
	var wg sync.WaitGroup
	for w, op := range ops {
		n := b.N / workers
		if w < b.N%workers {
			n++
		}
		wg.Go(func() {
			for range n {
				op()
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/run")
}

// BenchmarkFireToExec is the guarded-run overhead: from the call of Fire
// to the moment the child has exec'd (run.Start: os/exec's Start returns
// once exec succeeded), against the same span of a bare exec.Command Start.
// Each iteration does one of each, so both see the same machine; the
// medians and their ratio are reported, for each durability mode.
func BenchmarkFireToExec(b *testing.B) {
	for _, d := range run.Durabilities() {
		b.Run("durability="+string(d), func(b *testing.B) { fireToExec(b, d) })
	}
}

func fireToExec(b *testing.B, d run.Durability) {
	r := newRig(b, true, d)
	job, slot := trueJob("job"), time.Now()
	var bare, guarded []time.Duration
	for b.Loop() {
		t0 := time.Now()
		cmd := exec.Command("/bin/true")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		bare = append(bare, time.Since(t0))
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		t0 = time.Now()
		if f := r.fire(job, &slot); f.Outcome != run.OK {
			b.Fatalf("outcome %s: %s", f.Outcome, f.Reason) // one run at a time: no race to excuse
		}
		guarded = append(guarded, (<-r.started).Sub(t0))
	}
	mb, mg := medianOf(bare), medianOf(guarded)
	b.ReportMetric(float64(mb)/float64(time.Microsecond), "bare-µs")
	b.ReportMetric(float64(mg)/float64(time.Microsecond), "guarded-µs")
	b.ReportMetric(float64(mg)/float64(mb), "ratio")
}

func medianOf(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// failHandler fails the benchmark at every Error record (a failed write).
type failHandler struct{ tb testing.TB }

func (h failHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h failHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		h.tb.Errorf("logged: %s", r.Message)
	}
	return nil
}
func (h failHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h failHandler) WithGroup(string) slog.Handler      { return h }
