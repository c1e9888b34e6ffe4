package recovery

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/file"
	"cronvisor/internal/store/history"
	"cronvisor/runner"
)

// TestSweep drives each rule of Sweep with a lock record (written as a
// supervisor writes it, no process holding the lock) and the history row
// of its run, if any.
func TestSweep(t *testing.T) {
	t.Parallel()
	host, _ := os.Hostname()
	slot := started.Add(-time.Minute)
	since := slot.Add(10 * time.Millisecond)
	// rec is the in-flight record of run "r" of job "j" by a dead
	// supervisor, after its SetPID.
	rec := lock.Record{Holder: run.Holder{PID: 4321, Host: host, Job: "j", RunID: "r", Since: since}, Slot: slot, SupervisorPID: deadPID, Slots: map[string]time.Time{"j": slot}, InFlight: true}
	with := func(edit func(*lock.Record)) lock.Record {
		h := rec
		edit(&h)
		return h
	}
	open := &run.Record{Job: "j", RunID: "r", Outcome: run.Running, ScheduledAt: slot,
		StartedAt: since, Host: host, SupervisorPID: deadPID, PID: 4321}
	exit0 := 0
	done := &run.Record{Job: "j", RunID: "r", Outcome: run.OK, ScheduledAt: slot,
		StartedAt: since, EndedAt: since.Add(time.Second), ExitCode: &exit0, Host: host, SupervisorPID: deadPID, PID: 4321}
	died := "supervisor (pid " + itoa(deadPID) + " on " + host + ") died during the run; exit status unknown"
	tests := []struct {
		name    string
		record  lock.Record
		row     *run.Record // the run's row before the sweep
		keepAge time.Duration
		mine    bool
		want    *run.Record // nil: no row after
		closed  int
	}{
		{name: "start lost: rebuilt from the record and closed", record: rec,
			want: &run.Record{Job: "j", RunID: "r", Outcome: run.Interrupted, ScheduledAt: slot,
				StartedAt: since, EndedAt: now, Reason: died, Host: host, SupervisorPID: deadPID, PID: 4321}, closed: 1},
		{name: "start lost before the exec", record: with(func(h *lock.Record) { h.PID = deadPID }),
			want: &run.Record{Job: "j", RunID: "r", Outcome: run.Interrupted, ScheduledAt: slot,
				EndedAt: now, Reason: "supervisor (pid " + itoa(deadPID) + " on " + host + ") died as the run was starting; whether it ran is unknown",
				Host: host, SupervisorPID: deadPID}, closed: 1},
		{name: "manual run: the slot cursor did not move", record: with(func(h *lock.Record) { h.Slots = nil }),
			want: &run.Record{Job: "j", RunID: "r", Outcome: run.Interrupted, ScheduledAt: slot,
				StartedAt: since, EndedAt: now, Reason: died, Host: host, SupervisorPID: deadPID, PID: 4321, Manual: true}, closed: 1},
		{name: "end lost: the open row closed", record: rec, row: open,
			want: &run.Record{Job: "j", RunID: "r", Outcome: run.Interrupted, ScheduledAt: slot,
				StartedAt: since, EndedAt: now, Reason: died, Host: host, SupervisorPID: deadPID, PID: 4321}, closed: 1},
		{name: "end recorded before the death: left alone", record: rec, row: done, want: done},
		{name: "open row, lock taken since by another run", record: with(func(h *lock.Record) { h.RunID = "later"; h.InFlight = false }), row: open,
			want: &run.Record{Job: "j", RunID: "r", Outcome: run.Interrupted, ScheduledAt: slot,
				StartedAt: since, EndedAt: now, Reason: died, Host: host, SupervisorPID: deadPID, PID: 4321}, closed: 1},
		{name: "released: not in flight", record: with(func(h *lock.Record) { h.InFlight = false })},
		{name: "supervisor alive", record: with(func(h *lock.Record) { h.SupervisorPID = livePID })},
		{name: "another host", record: with(func(h *lock.Record) { h.Host = "elsewhere" })},
		{name: "older than keep_age: its row was pruned", record: rec, keepAge: 30 * time.Minute},
		{name: "own run", record: with(func(h *lock.Record) { h.SupervisorPID = os.Getpid(); h.Since = started.Add(time.Second) })},
		{name: "own run from before a clock step back", record: with(func(h *lock.Record) { h.SupervisorPID = os.Getpid() }), mine: true},
		{name: "predecessor with this pid", record: with(func(h *lock.Record) { h.SupervisorPID = os.Getpid() }),
			want: &run.Record{Job: "j", RunID: "r", Outcome: run.Interrupted, ScheduledAt: slot, StartedAt: since, EndedAt: now,
				Reason: strings.Replace(died, itoa(deadPID), itoa(os.Getpid()), 1), Host: host, SupervisorPID: os.Getpid(), PID: 4321}, closed: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, func(c *Config) {
				c.KeepAge = func() time.Duration { return tc.keepAge }
				c.Mine = func(string) bool { return tc.mine }
			})
			f.writeRecord(t, "j", tc.record)
			if tc.row != nil {
				if _, err := f.store.Adopt(context.Background(), *tc.row); err != nil {
					t.Fatal(err)
				}
				if tc.row.Outcome != run.Running {
					if err := f.store.Finish(context.Background(), *tc.row); err != nil {
						t.Fatal(err)
					}
				}
			}
			closed, err := f.r.Sweep(context.Background())
			if err != nil {
				t.Fatalf("Sweep: %v", err)
			}
			if closed != tc.closed {
				t.Errorf("Sweep closed %d runs, want %d", closed, tc.closed)
			}
			got, ok := f.row(t, "r")
			switch {
			case tc.want == nil && ok:
				t.Fatalf("row %+v, want none", got)
			case tc.want == nil:
			case !ok:
				t.Fatalf("no row, want %+v", *tc.want)
			default:
				checkRow(t, got, *tc.want)
			}
		})
	}
}

// checkRow compares the fields recovery sets.
func checkRow(t *testing.T, got, want run.Record) {
	t.Helper()
	if got.Job != want.Job || got.Outcome != want.Outcome || got.Reason != want.Reason ||
		!got.ScheduledAt.Equal(want.ScheduledAt) || !got.StartedAt.Equal(want.StartedAt) || !got.EndedAt.Equal(want.EndedAt) ||
		(got.ExitCode == nil) != (want.ExitCode == nil) || got.Host != want.Host ||
		got.SupervisorPID != want.SupervisorPID || got.PID != want.PID || got.Manual != want.Manual {
		t.Errorf("row\n got %+v\nwant %+v", got, want)
	}
}

// TestSweepTwiceRecordsOnce: two recoverers (two supervisors on the state
// dir) sweeping the same dead run leave one row, closed once.
func TestSweepTwiceRecordsOnce(t *testing.T) {
	t.Parallel()
	host, _ := os.Hostname()
	f := newFixture(t, nil)
	f.writeRecord(t, "j", lock.Record{Holder: run.Holder{PID: 4321, Host: host, Job: "j", RunID: "r", Since: started}, Slot: started, SupervisorPID: deadPID, InFlight: true})
	other := New(Config{Store: f.store, Locker: file.NewLocker(f.dir+"/locks", runner.InRun), Alive: aliveOnly(livePID),
		Self: os.Getpid(), Started: started, LockOf: func(j string) string { return j }, StateDir: f.dir,
		Now: func() time.Time { return now.Add(time.Second) }})
	defer other.Close()
	total := 0
	for _, r := range []*Recoverer{f.r, other, f.r} {
		n, err := r.Sweep(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	recs, err := f.store.Query(context.Background(), history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if total != 1 || len(recs) != 1 || !recs[0].EndedAt.Equal(now) {
		t.Fatalf("closed %d times, rows %+v; want one row closed once, at the first sweep", total, recs)
	}
}

// TestLaterSweepsReadWhatChangedAndWhatWasAlive: after a first sweep, a record written since is read, and so is one that named a live
// supervisor, whose death writes nothing; an old record of a dead one,
// untouched since, is not read again.
func TestLaterSweepsReadWhatChangedAndWhatWasAlive(t *testing.T) {
	t.Parallel()
	host, _ := os.Hostname()
	var supervisorAlive atomic.Bool
	supervisorAlive.Store(true)
	f := newFixture(t, func(c *Config) {
		c.Alive = func(pid int, _ time.Time) bool { return pid == livePID && supervisorAlive.Load() }
	})
	rec := func(runID string, pid int) lock.Record {
		return lock.Record{Holder: run.Holder{PID: 4321, Host: host, Job: runID, RunID: runID, Since: started}, Slot: started, SupervisorPID: pid, InFlight: true}
	}
	f.writeRecord(t, "alive", rec("alive", livePID))
	if n, err := f.r.Sweep(context.Background()); err != nil || n != 0 {
		t.Fatalf("first Sweep: closed %d, %v; want nothing to close", n, err)
	}
	// An old record of a dead supervisor, as if written before the first
	// sweep (its mtime) but not read by it: a later sweep skips it.
	f.writeRecord(t, "old", rec("old", deadPID))
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(f.dir+"/locks/old.lock", past, past); err != nil {
		t.Fatal(err)
	}
	f.writeRecord(t, "new", rec("new", deadPID))
	supervisorAlive.Store(false)
	n, err := f.r.Sweep(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("second Sweep: closed %d, %v; want the new record's run and the one whose supervisor died", n, err)
	}
	for id, want := range map[string]bool{"alive": true, "new": true, "old": false} {
		if _, ok := f.row(t, id); ok != want {
			t.Errorf("run %s recorded: %v, want %v", id, ok, want)
		}
	}
}
