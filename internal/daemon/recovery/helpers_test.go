package recovery

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/file"
	"cronvisor/internal/store/history"
	"cronvisor/runner"
)

// Reference times: this process "started" at started; records are a few
// seconds older or newer; now is when the recoverer looks.
var (
	started = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	now     = started.Add(time.Hour)
)

// deadPID is above PID_MAX_LIMIT (1<<22): no process has it.
const deadPID = 1<<22 + 7

// livePID is the one pid the table tests' liveness calls alive.
const livePID = 777

func aliveOnly(pid int) Alive {
	return func(p int, _ time.Time) bool { return p == pid }
}

// fixture is a state dir with a history store, a file locker and a
// Recoverer on them.
type fixture struct {
	dir       string
	store     *history.Store
	locker    *file.Locker
	r         *Recoverer
	interrupt chan string // run ids Interrupt closed
}

// notifying is the real store, telling the test about each run it closed.
type notifying struct {
	*history.Store
	closed chan<- string
}

func (n notifying) WriteEnd(ctx context.Context, e run.End) (bool, error) {
	ok, err := n.Store.WriteEnd(ctx, e)
	if ok && e.Outcome == run.Interrupted {
		n.closed <- e.RunID
	}
	return ok, err
}

// newFixture returns a fixture; edit changes its Config before New.
func newFixture(t *testing.T, edit func(*Config)) *fixture {
	t.Helper()
	dir := t.TempDir()
	store, err := history.Open(filepath.Join(dir, "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	f := &fixture{dir: dir, store: store, locker: file.NewLocker(filepath.Join(dir, "locks"), runner.InRun),
		interrupt: make(chan string, 16)}
	cfg := Config{
		Store: notifying{store, f.interrupt}, Locker: f.locker, Alive: aliveOnly(livePID),
		Self: os.Getpid(), Started: started,
		LockOf: func(job string) string { return job }, StateDir: dir,
		Now: func() time.Time { return now },
	}
	if edit != nil {
		edit(&cfg)
	}
	f.r = New(cfg)
	t.Cleanup(f.r.Close)
	return f
}

// writeRecord writes h as lock name's record, as a supervisor would have,
// with no process holding the lock.
func (f *fixture) writeRecord(t *testing.T, name string, h lock.Record) {
	t.Helper()
	data, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(f.dir, "locks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".lock"), append(data, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
}

// row returns the history row of runID; ok is false if there is none.
func (f *fixture) row(t *testing.T, runID string) (run.Record, bool) {
	t.Helper()
	recs, err := f.store.Query(context.Background(), history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.RunID == runID {
			return r, true
		}
	}
	return run.Record{}, false
}

// orphan starts a `sleep` that holds lock name for run runID the way a
// dead supervisor's run does: the lease taken for it (by a locker of its
// own, as another process would) is abandoned without Release, as a
// SIGKILL of the supervisor leaves it, so the record stays in flight and
// the lock stays held by the sleep alone. It returns the sleep's pid and
// the func that kills and reaps it.
func (f *fixture) orphan(t *testing.T, name, runID string, slot time.Time) (int, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	lease, err := file.NewLocker(filepath.Join(f.dir, "locks"), runner.InRun).Acquire(ctx, lock.Request{
		Name: name, Record: lock.Record{Holder: run.Holder{Job: name, RunID: runID, Since: slot.Add(time.Second), PID: deadPID}, Slot: slot, SupervisorPID: deadPID}})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "sleep", "30")
	cmd.ExtraFiles = []*os.File{lease.File}
	cmd.Env = append(os.Environ(), "CRONVISOR_RUN_ID="+runID)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := lease.SetPID(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	lease.File.Close() // the supervisor's descriptor dies with it
	stop := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() }
	t.Cleanup(stop)
	return cmd.Process.Pid, stop
}

// closedWithin waits until the Recoverer has closed runID, at most bound.
func (f *fixture) closedWithin(t *testing.T, runID string, bound time.Duration) {
	t.Helper()
	deadline := time.After(bound)
	for {
		select {
		case id := <-f.interrupt:
			if id == runID {
				return
			}
		case <-deadline:
			t.Fatalf("run %s not closed within %v", runID, bound)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
