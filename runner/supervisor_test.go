package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cronvisor/config"
	"cronvisor/lock"
	"cronvisor/proc"
)

func TestMain(m *testing.M) {
	if proc.IsGuard(os.Args) { // the guard of a Tethered lease's run
		os.Exit(proc.GuardMain(os.Args[1:]))
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
	all []Event
}

func (e *events) emit(ev Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
}

func (e *events) started(runID string) (RunStarted, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.all {
		if s, ok := ev.(RunStarted); ok && s.RunID == runID {
			return s, true
		}
	}
	return RunStarted{}, false
}

func (e *events) output(runID string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.all {
		if o, ok := ev.(RunOutput); ok && o.RunID == runID {
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
	return NewSupervisor(lock.NewFileLocker(filepath.Join(dir, "locks")), NopRecorder{}, ev.emit, opts...), ev
}

// fireAsync fires in the background and returns a channel with the result.
func fireAsync(s *Supervisor, j config.Job, slot time.Time) <-chan RunFinished {
	ch := make(chan RunFinished, 1)
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

func recv(t *testing.T, ch <-chan RunFinished) RunFinished {
	t.Helper()
	select {
	case f := <-ch:
		return f
	case <-time.After(20 * time.Second):
		t.Fatal("fire did not finish")
		return RunFinished{}
	}
}

func slotAt(sec int) time.Time { return time.Date(2026, 6, 1, 12, 0, sec, 0, time.UTC) }

func TestFireOutcomes(t *testing.T) {
	tests := []struct {
		name       string
		job        func(config.Job) config.Job
		script     string
		want       Outcome
		wantCode   int // -1: no exit code
		wantReason string
	}{
		{"ok", nil, "echo hello", OutcomeOK, 0, ""},
		{"failed keeps the exit code", nil, "exit 3", OutcomeFailed, 3, ""},
		{"timeout", func(j config.Job) config.Job { j.Timeout = 300 * time.Millisecond; return j }, "sleep 30", OutcomeTimeout, 143, "exceeded timeout 300ms"},
		{"not found is an error with 127", func(j config.Job) config.Job { j.Command = []string{"/nonexistent/cmd"}; return j }, "", OutcomeError, 127, "failed to start"},
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
			if tc.want == OutcomeOK {
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
	run := waitRunning(t, s, ev, "sync")
	second := s.Fire(context.Background(), j, slotAt(1), false)
	if second.Outcome != OutcomeSkipped || !strings.HasPrefix(second.Reason, "lock held by pid ") {
		t.Fatalf("second fire: %s %q, want skipped with the holder", second.Outcome, second.Reason)
	}
	st, _ := ev.started(run.RunID)
	if !strings.Contains(second.Reason, "run "+run.RunID) {
		t.Errorf("skip reason %q does not name run %s", second.Reason, run.RunID)
	}
	// Jobs sharing a lock exclude each other too.
	other := shJob("other", "true")
	other.Lock = "sync"
	if f := s.Fire(context.Background(), other, slotAt(1), false); f.Outcome != OutcomeSkipped {
		t.Errorf("job sharing the lock: %s, want skipped", f.Outcome)
	}
	if n := s.Kill("sync", ErrKilled); n != 1 {
		t.Fatalf("killed %d runs, want 1", n)
	}
	f := recv(t, first)
	if f.Outcome != OutcomeInterrupted || f.Reason != ErrKilled.Error() || f.PID != st.PID {
		t.Errorf("killed run: %s %q pid %d, want interrupted by operator, pid %d", f.Outcome, f.Reason, f.PID, st.PID)
	}
}

func TestSlotAlreadyRunAcrossSupervisors(t *testing.T) {
	dir := t.TempDir()
	a, _ := newTestSupervisor(t, dir)
	b, _ := newTestSupervisor(t, dir)
	j := shJob("short", "true")
	if f := a.Fire(context.Background(), j, slotAt(0), false); f.Outcome != OutcomeOK {
		t.Fatalf("first supervisor: %s %s", f.Outcome, f.Reason)
	}
	f := b.Fire(context.Background(), j, slotAt(0), false)
	if f.Outcome != OutcomeSkipped || f.Reason != "slot already run" {
		t.Fatalf("second supervisor, same slot: %s %q, want skipped: slot already run", f.Outcome, f.Reason)
	}
	if f := b.Fire(context.Background(), j, slotAt(1), false); f.Outcome != OutcomeOK {
		t.Fatalf("next slot: %s %s", f.Outcome, f.Reason)
	}
	// A manual run neither checks nor consumes slots.
	if f := a.Fire(context.Background(), j, slotAt(1), true); f.Outcome != OutcomeOK {
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
	deadline := time.Now().Add(5 * time.Second)
	for !s.Queued("q") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	third := s.Fire(context.Background(), j, slotAt(2), false)
	if third.Outcome != OutcomeSkipped || !strings.Contains(third.Reason, "already queued") {
		t.Errorf("third fire: %s %q, want skipped because one is queued", third.Outcome, third.Reason)
	}
	f1, f2 := recv(t, first), recv(t, second)
	if f1.Outcome != OutcomeOK || f2.Outcome != OutcomeOK {
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
	if f1.Outcome != OutcomeReplaced {
		t.Fatalf("old run: %s %q, want replaced", f1.Outcome, f1.Reason)
	}
	run := waitRunning(t, s, ev, "r")
	if s.Kill("r", ErrKilled) != 1 {
		t.Fatal("the new run is not in flight")
	}
	f2 := recv(t, second)
	if f2.RunID != run.RunID || f2.Outcome != OutcomeInterrupted {
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
	if f.Outcome != OutcomeSkipped {
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
	if second.Outcome != OutcomeOK {
		t.Fatalf("allow: second run %s %q, want ok", second.Outcome, second.Reason)
	}
	if f := recv(t, first); f.Outcome != OutcomeOK {
		t.Fatalf("allow: first run %s", f.Outcome)
	}
}

func TestPausedFiresAreSkipped(t *testing.T) {
	s, _ := newTestSupervisor(t, t.TempDir())
	j := shJob("p", "true")
	s.Pause("p")
	if f := s.Fire(context.Background(), j, slotAt(0), false); f.Outcome != OutcomeSkipped || f.Reason != "paused" {
		t.Fatalf("paused: %s %q", f.Outcome, f.Reason)
	}
	if f := s.Fire(context.Background(), j, slotAt(0), true); f.Outcome != OutcomeOK {
		t.Fatalf("manual run of a paused job: %s", f.Outcome)
	}
	s.Resume("p")
	if f := s.Fire(context.Background(), j, slotAt(1), false); f.Outcome != OutcomeOK {
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
	queued := make(chan RunFinished, 1)
	go func() { queued <- s.Fire(ctx, j, slotAt(1), false) }()
	for deadline := time.Now().Add(5 * time.Second); !s.Queued("qd") && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	cancel() // the scheduler stops: the waiting fire is dropped, with a record
	f := recv(t, queued)
	if f.Outcome != OutcomeSkipped || !strings.Contains(f.Reason, "queued fire dropped") {
		t.Fatalf("queued fire at shutdown: %s %q", f.Outcome, f.Reason)
	}
	s.Kill("qd", ErrKilled)
	recv(t, first)
}

// losingLocker hands out file leases whose Lost channel the test closes, as
// a network backend does when renewal fails.
type losingLocker struct {
	lock.Locker
	lost chan struct{}
}

type losingLease struct {
	lock.Lease
	lost chan struct{}
}

func (l losingLease) Lost() <-chan struct{} { return l.lost }
func (l losingLease) FencingToken() int64   { return 42 }

func (l *losingLocker) Acquire(ctx context.Context, req lock.Request) (lock.Lease, error) {
	lease, err := l.Locker.Acquire(ctx, req)
	if err != nil {
		return nil, err
	}
	return losingLease{lease, l.lost}, nil
}

func TestLockLost(t *testing.T) {
	tests := []struct {
		name       string
		policy     config.LockLost
		want       Outcome
		wantReason string
	}{
		{"end: the run is ended like a timeout", config.LockLostEnd, OutcomeInterrupted, "lock lost"},
		{"continue: the run finishes unguarded", config.LockLostContinue, OutcomeOK, "continued unguarded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ll := &losingLocker{Locker: lock.NewFileLocker(filepath.Join(t.TempDir(), "locks")), lost: make(chan struct{})}
			ev := &events{}
			s := NewSupervisor(ll, NopRecorder{}, ev.emit)
			j := shJob("lease", `echo "token=$CRONVISOR_FENCING_TOKEN"; sleep 0.5`)
			j.OnLockLost = tc.policy
			done := fireAsync(s, j, slotAt(0))
			run := waitRunning(t, s, ev, "lease")
			// Lose the lease only once the job has printed: cancelled
			// before its echo, it would have nothing to show.
			for deadline := time.Now().Add(5 * time.Second); len(ev.output(run.RunID)) == 0; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the job printed nothing")
				}
			}
			close(ll.lost)
			f := recv(t, done)
			if f.Outcome != tc.want || !strings.Contains(f.Reason, tc.wantReason) {
				t.Fatalf("outcome %s %q, want %s with %q", f.Outcome, f.Reason, tc.want, tc.wantReason)
			}
			if out := ev.output(run.RunID); len(out) != 1 || out[0] != "token=42" {
				t.Errorf("output %q, want the fencing token in the environment", out)
			}
		})
	}
}

// TestLastOKMemo: a fire reads CRONVISOR_LAST_OK_SLOT from the store only
// when the lock's previous holder is not the run that left the memo.
func TestLastOKMemo(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	stored, queries := time.Date(2026, 5, 31, 23, 0, 0, 0, time.UTC), 0
	lookup := func(context.Context, string) (time.Time, error) {
		mu.Lock()
		defer mu.Unlock()
		queries++
		return stored, nil
	}
	s, ev := newTestSupervisor(t, dir, WithLastOK(lookup))
	okJob := shJob("memo", `echo "$CRONVISOR_LAST_OK_SLOT"`)
	failJob := shJob("memo", `echo "$CRONVISOR_LAST_OK_SLOT"; exit 1`)
	allowJob := okJob
	allowJob.Overlap = config.OverlapAllow

	fire := func(j config.Job, sec int, wantSlot time.Time, wantQueries int) {
		t.Helper()
		f := s.Fire(context.Background(), j, slotAt(sec), false)
		out := ev.output(f.RunID)
		if want := wantSlot.Format(time.RFC3339Nano); len(out) != 1 || out[0] != want {
			t.Fatalf("fire at :%02d: CRONVISOR_LAST_OK_SLOT %q, want %q", sec, out, want)
		}
		mu.Lock()
		defer mu.Unlock()
		if queries != wantQueries {
			t.Fatalf("fire at :%02d: %d store queries so far, want %d", sec, queries, wantQueries)
		}
	}
	fire(okJob, 1, stored, 1)      // nothing remembered: asks the store
	fire(okJob, 2, slotAt(1), 1)   // its own last run ended ok at :01
	fire(failJob, 3, slotAt(2), 1) // a failure...
	fire(okJob, 4, slotAt(2), 1)   // ...leaves the last ok where it was

	// Another process runs the job: it takes the lock and rewrites the record.
	other := lock.NewFileLocker(filepath.Join(dir, "locks"))
	lease, err := other.Acquire(context.Background(), lock.Request{Name: "memo",
		Holder: lock.Holder{PID: 1, Host: "elsewhere", Job: "memo", RunID: "foreign", SupervisorPID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	stored = time.Date(2026, 6, 1, 11, 0, 0, 0, time.UTC)
	mu.Unlock()
	fire(okJob, 5, stored, 2)

	// A run without the lock (overlap: allow) proves nothing: it asks the
	// store, and the memo goes. (The fake store learns of runs by hand.)
	fire(allowJob, 6, stored, 3)
	mu.Lock()
	stored = slotAt(6)
	mu.Unlock()
	fire(okJob, 7, slotAt(6), 4)
	fire(okJob, 8, slotAt(7), 4)
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
	if f := s.Fire(context.Background(), j, slotAt(1), false); f.Outcome != OutcomeSkipped {
		t.Fatalf("second fire: %s, want skipped", f.Outcome)
	}
	s.Pause("count")
	if f := s.Fire(context.Background(), j, slotAt(2), false); f.Outcome != OutcomeSkipped {
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
