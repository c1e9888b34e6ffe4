package runner

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/testlog"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/file"
)

// fakeRecorder records in memory; finished, when set, decides what
// Finished does (block, fail) before the end is kept.
type fakeRecorder struct {
	mu       sync.Mutex
	admit    func(runID string) error
	finished func(run.End) error
	events   []run.Event
}

func newFakeRecorder() *fakeRecorder { return &fakeRecorder{} }

func (r *fakeRecorder) Admit(runID string) error {
	if r.admit == nil {
		return nil
	}
	return r.admit(runID)
}

func (r *fakeRecorder) add(ev run.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *fakeRecorder) Started(ev run.Start)  { r.add(ev) }
func (r *fakeRecorder) Output(ev run.Output)  { r.add(ev) }
func (r *fakeRecorder) WriteSkip(ev run.Skip) { r.add(ev) }

func (r *fakeRecorder) WriteEnd(_ context.Context, ev run.End) (bool, error) {
	var err error
	if r.finished != nil {
		err = r.finished(ev)
	}
	r.add(ev)
	return true, err
}

func (r *fakeRecorder) ends() []run.End {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []run.End
	for _, ev := range r.events {
		if f, ok := ev.(run.End); ok {
			out = append(out, f)
		}
	}
	return out
}

func newRecordedSupervisor(t *testing.T, dir string, rec Recorder, opts ...Option) (*Supervisor, *events) {
	t.Helper()
	ev := &events{}
	return NewSupervisor(file.NewLocker(filepath.Join(dir, "locks"), InRun), rec, ev.emit, opts...), ev
}

// tryLock takes name from a locker of its own, as another supervisor on
// the same state dir would, and releases it at once.
func tryLock(dir, name string) error {
	lease, err := file.NewLocker(filepath.Join(dir, "locks"), InRun).Acquire(context.Background(),
		lock.Request{Name: name, Record: lock.Record{Holder: run.Holder{Job: "probe", RunID: "probe"}}})
	if err != nil {
		return err
	}
	return lease.Release()
}

// TestBlockedRecorderKeepsTheLockHeld: the lock of a run whose end the
// recorder has not taken yet stays held, whatever happened to its process;
// once the recorder returns, the lock is free. Before the release, the
// observers of emit have heard nothing of the end.
func TestBlockedRecorderKeepsTheLockHeld(t *testing.T) {
	dir := t.TempDir()
	rec := newFakeRecorder()
	entered, unblock := make(chan run.End, 1), make(chan struct{})
	rec.finished = func(f run.End) error {
		entered <- f
		<-unblock
		return nil
	}
	s, ev := newRecordedSupervisor(t, dir, rec)
	done := fireAsync(s, shJob("a", "true"), slotAt(0))
	var f run.End
	select {
	case f = <-entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the recorder never got the run's end")
	}
	if f.Outcome != run.OK {
		t.Fatalf("end %s %q, want ok", f.Outcome, f.Reason)
	}
	if err := tryLock(dir, "a"); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("lock taken while the recorder blocks (err %v), want ErrLocked", err)
	}
	ev.mu.Lock()
	for _, e := range ev.all {
		if _, ok := e.(run.End); ok {
			t.Error("observers heard the end before the recorder took it")
		}
	}
	ev.mu.Unlock()
	close(unblock)
	recv(t, done)
	if err := tryLock(dir, "a"); err != nil {
		t.Fatalf("lock after the recorder returned: %v, want free", err)
	}
	st, err := file.NewLocker(filepath.Join(dir, "locks"), InRun).Inspect(context.Background(), "a")
	if err != nil || st.Record.RunID != "probe" {
		t.Fatalf("inspect: %+v %v", st, err)
	}
}

// TestFailingRecorderIsLoggedAndLeavesTheRunInFlight: an end the recorder
// could not make durable is logged with its run, the lock is released all
// the same (the job runs on), and the lock's record still names the run as
// in flight, for the next supervisor's recovery should this one die before
// the recorder's retry writes it.
func TestFailingRecorderIsLoggedAndLeavesTheRunInFlight(t *testing.T) {
	dir := t.TempDir()
	rec := newFakeRecorder()
	rec.finished = func(run.End) error { return errors.New("disk full; held for a retry") }
	logged := &testlog.Buffer{}
	s, _ := newRecordedSupervisor(t, dir, rec, WithLogger(logged.Logger()))
	f := s.Fire(context.Background(), shJob("a", "true"), slotAt(0), false)
	if f.Outcome != run.OK {
		t.Fatalf("fire: %s %q, want ok (history failing is no reason to fail a run)", f.Outcome, f.Reason)
	}
	if got := rec.ends(); len(got) != 1 || got[0].RunID != f.RunID {
		t.Fatalf("recorder got ends %+v, want run %s once", got, f.RunID)
	}
	msgs := warnings(logged)
	if len(msgs) != 1 || !strings.Contains(msgs[0], "run_id="+f.RunID) || !strings.Contains(msgs[0], "disk full") {
		t.Fatalf("logged %q, want one warning naming run %s and the cause", msgs, f.RunID)
	}
	st, err := file.NewLocker(filepath.Join(dir, "locks"), InRun).Inspect(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if st.Held || !st.Record.InFlight || st.Record.RunID != f.RunID {
		t.Fatalf("lock after the run: held %v, record %+v; want free, run %s in flight", st.Held, st.Record, f.RunID)
	}

	rec.finished = nil // history works again: the next end clears it
	f = s.Fire(context.Background(), shJob("a", "true"), slotAt(1), false)
	st, err = file.NewLocker(filepath.Join(dir, "locks"), InRun).Inspect(context.Background(), "a")
	if err != nil || st.Record.InFlight || st.Record.RunID != f.RunID {
		t.Fatalf("lock after a recorded run: %+v %v, want run %s not in flight", st.Record, err, f.RunID)
	}
}

// warnings returns the lines of log at level WARN or above.
func warnings(log *testlog.Buffer) []string {
	var out []string
	for _, line := range log.Lines() {
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			out = append(out, line)
		}
	}
	return out
}

// TestSkipsAndRefusalsAreRecorded: a fire that does not run reaches the
// recorder too, before its observers hear of it: a skip (the lock is
// held) through Skipped, a fire refused before its run through Finished.
func TestSkipsAndRefusalsAreRecorded(t *testing.T) {
	dir := t.TempDir()
	rec := newFakeRecorder()
	s, ev := newRecordedSupervisor(t, dir, rec)
	holder, err := file.NewLocker(filepath.Join(dir, "locks"), InRun).Acquire(context.Background(),
		lock.Request{Name: "a", Record: lock.Record{Holder: run.Holder{Job: "other", RunID: "other-run"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release()
	f := s.Fire(context.Background(), shJob("a", "true"), slotAt(0), false)
	if f.Outcome != run.Skipped {
		t.Fatalf("fire under a held lock: %s %q, want skipped", f.Outcome, f.Reason)
	}
	rec.mu.Lock()
	var skips []run.Skip
	for _, e := range rec.events {
		if sk, ok := e.(run.Skip); ok {
			skips = append(skips, sk)
		}
	}
	rec.mu.Unlock()
	if len(skips) != 1 || skips[0].RunID != f.RunID || !strings.Contains(skips[0].Reason, "lock held") {
		t.Fatalf("recorded skips %+v, want run %s skipped for the held lock", skips, f.RunID)
	}
	ev.mu.Lock()
	n := len(ev.all)
	ev.mu.Unlock()
	if n != 1 {
		t.Errorf("observers got %d events, want the skip once", n)
	}
}
