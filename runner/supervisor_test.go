package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/harness/testlog"
	"cronvisor/internal/lock/file"
	"cronvisor/internal/proc"
)

func TestMain(m *testing.M) {
	if proc.IsKeeper(os.Args) { // the guard of a Tethered lease's run
		os.Exit(proc.KeeperMain(os.Args[1:], nil))
	}
	if proc.IsSetup(os.Args) { // the exec shim of a job with process limits
		os.Exit(proc.SetupMain(os.Args[1:]))
	}
	// Orphans of the runs under test come back to this process.
	_ = proc.EnableSubreaper()
	ctx, cancel := context.WithCancel(context.Background())
	proc.StartReaper(ctx)
	code := m.Run()
	cancel()
	os.Exit(code)
}

// events collects what a Supervisor emits.
type events struct {
	mu  sync.Mutex
	all []run.Event
}

func (e *events) emit(ev run.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
}

// waiting tells whether a fire of job told it waits for a slot.
func (e *events) waiting(job string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.all {
		if w, ok := ev.(run.Waiting); ok && w.Job == job {
			return true
		}
	}
	return false
}

func (e *events) started(runID string) (run.Start, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.all {
		if s, ok := ev.(run.Start); ok && s.RunID == runID {
			return s, true
		}
	}
	return run.Start{}, false
}

func (e *events) output(runID string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.all {
		if o, ok := ev.(run.Output); ok && o.RunID == runID {
			out = append(out, o.Line)
		}
	}
	return out
}

func shJob(name, script string) config.Job {
	return config.Job{
		Name: name, Command: []string{"/bin/sh", "-c", script}, Shell: "/bin/sh",
		Timeout: 20 * time.Second, KillGrace: time.Second, Overlap: config.OverlapSkip,
		Lock: name, Enabled: true, Env: map[string]string{"CRONVISOR_TEST": "runner"},
	}
}

func newTestSupervisor(t *testing.T, dir string, opts ...Option) (*Supervisor, *events) {
	t.Helper()
	ev := &events{}
	return NewSupervisor(file.NewLocker(filepath.Join(dir, "locks"), InRun), NopRecorder{}, ev.emit, opts...), ev
}

// fireAsync fires in the background and returns a channel with the result.
func fireAsync(s *Supervisor, j config.Job, slot time.Time) <-chan run.End {
	ch := make(chan run.End, 1)
	go func() { ch <- s.Fire(context.Background(), j, slot, false) }()
	return ch
}

// waitRunning waits until job has a run in flight whose process started.
func waitRunning(t *testing.T, s *Supervisor, ev *events, job string) ActiveRun {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range s.Active() {
			if r.Job == job {
				if _, ok := ev.started(r.RunID); ok {
					return r
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("job %s never started", job)
	return ActiveRun{}
}

func recv(t *testing.T, ch <-chan run.End) run.End {
	t.Helper()
	select {
	case f := <-ch:
		return f
	case <-time.After(20 * time.Second):
		t.Fatal("fire did not finish")
		return run.End{}
	}
}

func slotAt(sec int) time.Time { return time.Date(2026, 6, 1, 12, 0, sec, 0, time.UTC) }

func TestFireOutcomes(t *testing.T) {
	tests := []struct {
		name       string
		job        func(config.Job) config.Job
		script     string
		want       run.Outcome
		wantCode   int // -1: no exit code
		wantReason string
	}{
		{"ok", nil, "echo hello", run.OK, 0, ""},
		{"failed keeps the exit code", nil, "exit 3", run.Failed, 3, ""},
		{"timeout", func(j config.Job) config.Job { j.Timeout = 300 * time.Millisecond; return j }, "sleep 30", run.Timeout, 143, "exceeded timeout 300ms"},
		{"not found is an error with 127", func(j config.Job) config.Job { j.Command = []string{"/nonexistent/cmd"}; return j }, "", run.Error, 127, "failed to start"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, ev := newTestSupervisor(t, t.TempDir())
			j := shJob("j", tc.script)
			if tc.job != nil {
				j = tc.job(j)
			}
			f := s.Fire(context.Background(), j, slotAt(0), false)
			if f.Outcome != tc.want {
				t.Fatalf("outcome %s (%s), want %s", f.Outcome, f.Reason, tc.want)
			}
			if tc.wantCode >= 0 && (f.ExitCode == nil || *f.ExitCode != tc.wantCode) {
				t.Errorf("exit code %v, want %d", f.ExitCode, tc.wantCode)
			}
			if !strings.Contains(f.Reason, tc.wantReason) {
				t.Errorf("reason %q, want it to contain %q", f.Reason, tc.wantReason)
			}
			if tc.want == run.OK {
				if got := ev.output(f.RunID); len(got) != 1 || got[0] != "hello" {
					t.Errorf("output %q, want [hello]", got)
				}
			}
		})
	}
}

func TestFireEnvironment(t *testing.T) {
	lastOK := time.Date(2026, 5, 31, 23, 0, 0, 0, time.UTC)
	s, ev := newTestSupervisor(t, t.TempDir(), WithLastOK(func(context.Context, string) (time.Time, error) { return lastOK, nil }))
	j := shJob("envjob", `echo "$CRONVISOR_JOB|$CRONVISOR_SCHEDULED_AT|$CRONVISOR_LAST_OK_SLOT|$CRONVISOR_TEST|$CRONVISOR_LOCK_FD|${CRONVISOR_DEADLINE:+set}|$CRONVISOR_RUN_ID"`)
	f := s.Fire(context.Background(), j, slotAt(5), false)
	out := ev.output(f.RunID)
	want := "envjob|2026-06-01T12:00:05Z|2026-05-31T23:00:00Z|runner|3|set|" + f.RunID
	if len(out) != 1 || out[0] != want {
		t.Fatalf("env line %q, want %q", out, want)
	}
}

func TestOverlapSkipNamesTheHolder(t *testing.T) {
	dir := t.TempDir()
	s, ev := newTestSupervisor(t, dir)
	j := shJob("sync", "sleep 30")
	first := fireAsync(s, j, slotAt(0))
	active := waitRunning(t, s, ev, "sync")
	second := s.Fire(context.Background(), j, slotAt(1), false)
	if second.Outcome != run.Skipped || !strings.HasPrefix(second.Reason, "lock held by pid ") {
		t.Fatalf("second fire: %s %q, want skipped with the holder", second.Outcome, second.Reason)
	}
	st, _ := ev.started(active.RunID)
	if !strings.Contains(second.Reason, "run "+active.RunID) {
		t.Errorf("skip reason %q does not name run %s", second.Reason, active.RunID)
	}
	// Jobs sharing a lock exclude each other too.
	other := shJob("other", "true")
	other.Lock = "sync"
	if f := s.Fire(context.Background(), other, slotAt(1), false); f.Outcome != run.Skipped {
		t.Errorf("job sharing the lock: %s, want skipped", f.Outcome)
	}
	if n := s.Kill("sync", ErrKilled); n != 1 {
		t.Fatalf("killed %d runs, want 1", n)
	}
	f := recv(t, first)
	if f.Outcome != run.Interrupted || f.Reason != ErrKilled.Error() || f.PID != st.PID {
		t.Errorf("killed run: %s %q pid %d, want interrupted by operator, pid %d", f.Outcome, f.Reason, f.PID, st.PID)
	}
}

func TestSlotAlreadyRunAcrossSupervisors(t *testing.T) {
	dir := t.TempDir()
	a, _ := newTestSupervisor(t, dir)
	b, _ := newTestSupervisor(t, dir)
	j := shJob("short", "true")
	first := a.Fire(context.Background(), j, slotAt(0), false)
	if first.Outcome != run.OK {
		t.Fatalf("first supervisor: %s %s", first.Outcome, first.Reason)
	}
	f := b.Fire(context.Background(), j, slotAt(0), false)
	host, _ := os.Hostname()
	if want := "slot already run by run " + first.RunID + " on " + host; f.Outcome != run.Skipped || f.Reason != want {
		t.Fatalf("second supervisor, same slot: %s %q, want skipped: %s", f.Outcome, f.Reason, want)
	}
	if f := b.Fire(context.Background(), j, slotAt(1), false); f.Outcome != run.OK {
		t.Fatalf("next slot: %s %s", f.Outcome, f.Reason)
	}
	// A manual run neither checks nor consumes slots.
	if f := a.Fire(context.Background(), j, slotAt(1), true); f.Outcome != run.OK {
		t.Fatalf("manual run: %s %s", f.Outcome, f.Reason)
	}
}

func TestOverlapQueue(t *testing.T) {
	s, ev := newTestSupervisor(t, t.TempDir())
	j := shJob("q", "sleep 0.4")
	j.Overlap = config.OverlapQueue
	first := fireAsync(s, j, slotAt(0))
	waitRunning(t, s, ev, "q")
	second := fireAsync(s, j, slotAt(1))
	testlog.Eventually(t, 5*time.Second, "the second fire queued", func() bool { return s.Queued("q") })
	third := s.Fire(context.Background(), j, slotAt(2), false)
	if third.Outcome != run.Skipped || !strings.Contains(third.Reason, "already queued") {
		t.Errorf("third fire: %s %q, want skipped because one is queued", third.Outcome, third.Reason)
	}
	f1, f2 := recv(t, first), recv(t, second)
	if f1.Outcome != run.OK || f2.Outcome != run.OK {
		t.Fatalf("outcomes %s, %s; want ok, ok", f1.Outcome, f2.Outcome)
	}
	if f2.Started.Before(f1.Ended) {
		t.Errorf("queued run started %s before the first ended %s", f2.Started, f1.Ended)
	}
	if !f2.Slot.Equal(slotAt(1)) {
		t.Errorf("queued run slot %s, want its own slot %s", f2.Slot, slotAt(1))
	}
}

func TestOverlapReplace(t *testing.T) {
	s, ev := newTestSupervisor(t, t.TempDir())
	j := shJob("r", "sleep 30")
	j.Overlap = config.OverlapReplace
	first := fireAsync(s, j, slotAt(0))
	waitRunning(t, s, ev, "r")
	second := fireAsync(s, j, slotAt(1))
	f1 := recv(t, first)
	if f1.Outcome != run.Replaced {
		t.Fatalf("old run: %s %q, want replaced", f1.Outcome, f1.Reason)
	}
	active := waitRunning(t, s, ev, "r")
	if s.Kill("r", ErrKilled) != 1 {
		t.Fatal("the new run is not in flight")
	}
	f2 := recv(t, second)
	if f2.RunID != active.RunID || f2.Outcome != run.Interrupted {
		t.Errorf("new run %s: %s, want the replacing run, interrupted by the test", f2.RunID, f2.Outcome)
	}
}

func TestOverlapReplaceLeavesForeignHolders(t *testing.T) {
	dir := t.TempDir()
	owner, ev := newTestSupervisor(t, dir)
	other, _ := newTestSupervisor(t, dir)
	j := shJob("r2", "sleep 30")
	j.Overlap = config.OverlapReplace
	first := fireAsync(owner, j, slotAt(0))
	waitRunning(t, owner, ev, "r2")
	f := other.Fire(context.Background(), j, slotAt(1), false)
	if f.Outcome != run.Skipped {
		t.Errorf("replace against another supervisor's run: %s, want skipped", f.Outcome)
	}
	owner.Kill("r2", ErrKilled)
	recv(t, first)
}

func TestOverlapAllowRunsConcurrently(t *testing.T) {
	s, ev := newTestSupervisor(t, t.TempDir())
	j := shJob("a", "sleep 0.3")
	j.Overlap = config.OverlapAllow
	first := fireAsync(s, j, slotAt(0))
	waitRunning(t, s, ev, "a")
	second := s.Fire(context.Background(), j, slotAt(1), false)
	if second.Outcome != run.OK {
		t.Fatalf("allow: second run %s %q, want ok", second.Outcome, second.Reason)
	}
	if f := recv(t, first); f.Outcome != run.OK {
		t.Fatalf("allow: first run %s", f.Outcome)
	}
}

func TestPausedFiresAreSkipped(t *testing.T) {
	s, _ := newTestSupervisor(t, t.TempDir())
	j := shJob("p", "true")
	s.Pause("p")
	if f := s.Fire(context.Background(), j, slotAt(0), false); f.Outcome != run.Skipped || f.Reason != "paused" {
		t.Fatalf("paused: %s %q", f.Outcome, f.Reason)
	}
	if f := s.Fire(context.Background(), j, slotAt(0), true); f.Outcome != run.OK {
		t.Fatalf("manual run of a paused job: %s", f.Outcome)
	}
	s.Resume("p")
	if f := s.Fire(context.Background(), j, slotAt(1), false); f.Outcome != run.OK {
		t.Fatalf("resumed: %s %q", f.Outcome, f.Reason)
	}
}

func TestQueuedFireDroppedAtShutdown(t *testing.T) {
	s, ev := newTestSupervisor(t, t.TempDir())
	j := shJob("qd", "sleep 30")
	j.Overlap = config.OverlapQueue
	first := fireAsync(s, j, slotAt(0))
	waitRunning(t, s, ev, "qd")
	ctx, cancel := context.WithCancel(context.Background())
	queued := make(chan run.End, 1)
	go func() { queued <- s.Fire(ctx, j, slotAt(1), false) }()
	testlog.Eventually(t, 5*time.Second, "the fire queued", func() bool { return s.Queued("qd") })
	cancel() // the scheduler stops: the waiting fire is dropped, with a record
	f := recv(t, queued)
	if f.Outcome != run.Skipped || !strings.Contains(f.Reason, "queued fire dropped") {
		t.Fatalf("queued fire at shutdown: %s %q", f.Outcome, f.Reason)
	}
	s.Kill("qd", ErrKilled)
	recv(t, first)
}

// TestStartingCountsFiresBeforeTheirExec: Starting counts a fire until its
// child has exec'd or it gave up, whatever the path.
func TestStartingCountsFiresBeforeTheirExec(t *testing.T) {
	dir := t.TempDir()
	// The lookup of CRONVISOR_LAST_OK_SLOT happens before the exec: a fire
	// blocked in it is still starting.
	inLookup, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s, ev := newTestSupervisor(t, dir, WithLastOK(func(context.Context, string) (time.Time, error) {
		once.Do(func() { close(inLookup); <-release })
		return time.Time{}, nil
	}))
	j := shJob("count", "sleep 30")
	var released sync.Once
	unblock := func() { released.Do(func() { close(release) }) }
	first := fireAsync(s, j, slotAt(0))
	t.Cleanup(func() { // a failed check leaves neither the fire nor its sleep behind
		unblock()
		s.Kill("count", ErrKilled)
	})
	<-inLookup
	if n := s.Starting(); n != 1 {
		t.Errorf("a fire before its exec: Starting() = %d, want 1", n)
	}
	unblock()
	waitRunning(t, s, ev, "count")
	if n := s.Starting(); n != 0 {
		t.Errorf("a running fire: Starting() = %d, want 0", n)
	}
	if f := s.Fire(context.Background(), j, slotAt(1), false); f.Outcome != run.Skipped {
		t.Fatalf("second fire: %s, want skipped", f.Outcome)
	}
	s.Pause("count")
	if f := s.Fire(context.Background(), j, slotAt(2), false); f.Outcome != run.Skipped {
		t.Fatalf("paused fire: %s, want skipped", f.Outcome)
	}
	if n := s.Starting(); n != 0 {
		t.Errorf("after two skips: Starting() = %d, want 0", n)
	}
	s.Kill("count", ErrKilled)
	recv(t, first)
	if n := s.Starting(); n != 0 {
		t.Errorf("after the run: Starting() = %d, want 0", n)
	}
}
