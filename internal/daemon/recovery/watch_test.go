package recovery

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
	"cronvisor/internal/store/history"
)

// recordBound is how long recovery may take to close a run once its last
// process has exited; it takes milliseconds, the bound is for a loaded
// machine.
const recordBound = 2 * time.Second

// TestOrphanRecordedWhenItsLastProcessExits: a dead supervisor's run whose
// process still holds the lock is rebuilt at the sweep and left open, and
// closed as soon as that process exits.
func TestOrphanRecordedWhenItsLastProcessExits(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	_, stop := f.orphan(t, "j", "r", started)
	if n, err := f.r.Sweep(context.Background()); err != nil || n != 0 {
		t.Fatalf("Sweep: closed %d, %v; want 0 closed while the run's process holds the lock", n, err)
	}
	if got, ok := f.row(t, "r"); !ok || got.Outcome != run.Running || !got.StartedAt.Equal(started.Add(time.Second)) {
		t.Fatalf("row %+v (found %v), want the run rebuilt as running, started at its lock's since", got, ok)
	}
	exited := time.Now()
	stop()
	f.closedWithin(t, "r", recordBound)
	t.Logf("closed %v after the run's process exited", time.Since(exited).Round(time.Microsecond))
	if got, _ := f.row(t, "r"); got.Outcome != run.Interrupted || !got.EndedAt.Equal(now) {
		t.Fatalf("row %+v, want interrupted, ended now", got)
	}
}

// TestFireStartsRecovery: without any sweep, a fire that comes across a
// dead supervisor's run through the wrapped locker starts its recovery:
// refused by the run's surviving process, or taking the lock after it.
func TestFireStartsRecovery(t *testing.T) {
	t.Parallel()
	req := func(runID string) lock.Request {
		return lock.Request{Name: "j", Record: lock.Record{Holder: run.Holder{Job: "j", RunID: runID}, Slot: now, SupervisorPID: os.Getpid()}, CheckSlot: true}
	}
	t.Run("refused by the orphan", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, nil)
		_, stop := f.orphan(t, "j", "r", started)
		_, err := f.r.Locker().Acquire(context.Background(), req("fire-1"))
		if !errors.Is(err, lock.ErrLocked) {
			t.Fatalf("Acquire: %v, want the lock held by the orphan", err)
		}
		// The fire was refused: nothing else tells the recoverer.
		exited := time.Now()
		stop()
		f.closedWithin(t, "r", recordBound)
		t.Logf("closed %v after the run's process exited", time.Since(exited).Round(time.Microsecond))
	})
	t.Run("taking the lock after the orphan", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, nil)
		_, stop := f.orphan(t, "j", "r", started)
		stop()
		lease, err := f.r.Locker().Acquire(context.Background(), req("fire-2"))
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		defer lease.Release()
		if !lease.Preceded || lease.Previous == nil || lease.Previous.RunID != "r" {
			t.Errorf("the wrapped locker's grant lost its previous record: Preceded %v, Previous %+v", lease.Preceded, lease.Previous)
		}
		f.closedWithin(t, "r", recordBound)
	})
	t.Run("inspecting the lock", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, nil)
		_, stop := f.orphan(t, "j", "r", started)
		stop()
		if _, err := f.r.Locker().Inspect(context.Background(), "j"); err != nil {
			t.Fatal(err)
		}
		f.closedWithin(t, "r", recordBound)
	})
}

// TestCloseStopsWaiting: Close returns while an orphan still holds its
// lock, leaving its run open for the next supervisor.
func TestCloseStopsWaiting(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.orphan(t, "j", "r", started)
	if _, err := f.r.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	closing := time.Now()
	f.r.Close()
	if took := time.Since(closing); took > recordBound {
		t.Errorf("Close took %v", took)
	}
	if got, _ := f.row(t, "r"); got.Outcome != run.Running {
		t.Fatalf("row %+v after Close, want it still running", got)
	}
	if _, err := f.r.Sweep(context.Background()); err != nil {
		t.Fatalf("Sweep after Close: %v", err) // looks, but waits for nothing
	}
}

// flaky fails its first Adopt as a degraded history does.
type flaky struct {
	notifying
	failed bool
}

func (f *flaky) Adopt(ctx context.Context, r run.Record) (bool, error) {
	if !f.failed {
		f.failed = true
		return false, history.ErrUnavailable
	}
	return f.notifying.Adopt(ctx, r)
}

// TestStartRebuiltWhenHistoryComesBack: history failing when the sweep
// finds the orphan does not lose the run: its start is written with its
// end, once the orphan has exited.
func TestStartRebuiltWhenHistoryComesBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *Config) { c.Store = &flaky{notifying: c.Store.(notifying)} })
	_, stop := f.orphan(t, "j", "r", started)
	if _, err := f.r.Sweep(context.Background()); !errors.Is(err, history.ErrUnavailable) {
		t.Fatalf("Sweep: %v, want the store's failure", err)
	}
	if _, ok := f.row(t, "r"); ok {
		t.Fatal("a row although the store failed")
	}
	stop()
	f.closedWithin(t, "r", recordBound)
	if got, _ := f.row(t, "r"); got.Outcome != run.Interrupted || got.StartedAt.IsZero() {
		t.Fatalf("row %+v, want the run rebuilt and interrupted", got)
	}
}
