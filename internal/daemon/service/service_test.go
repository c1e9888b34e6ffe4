package service

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/schedule"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/lock/file"
	"cronvisor/runner"
)

func newTestService(t *testing.T, jobs ...config.Job) (*Service, *runner.Fanout) {
	t.Helper()
	fan := &runner.Fanout{}
	locker := file.NewLocker(filepath.Join(t.TempDir(), "locks"), runner.InRun)
	sup := runner.NewSupervisor(locker, runner.NopRecorder{}, fan.Emit)
	cfg := &config.Config{Jobs: jobs}
	reload := func(context.Context) error { return errors.New("reload refused: test") }
	s, err := New(sup, locker, cfg, WithReload(reload))
	if err != nil {
		t.Fatal(err)
	}
	fan.Listen(s.Handle)
	return s, fan
}

func job(t *testing.T, name string, enabled bool) config.Job {
	t.Helper()
	sched, err := schedule.Parse("@hourly", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return config.Job{Name: name, Schedule: "@hourly", Sched: sched, Location: time.UTC, Lock: name,
		Enabled: enabled, Overlap: config.OverlapSkip, Command: []string{"true"}, Timeout: time.Minute}
}

func stateOf(t *testing.T, s *Service, name string) ctl.JobStatus {
	t.Helper()
	jobs, err := s.Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Name == name {
			return j
		}
	}
	t.Fatalf("no job %s", name)
	return ctl.JobStatus{}
}

func TestJobStatesFollowEvents(t *testing.T) {
	s, fan := newTestService(t, job(t, "a", true), job(t, "off", false))
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	if got := stateOf(t, s, "a").State; got != ctl.StateIdle {
		t.Fatalf("fresh job state %s, want idle", got)
	}
	if got := stateOf(t, s, "off").State; got != ctl.StateDisabled {
		t.Fatalf("disabled job state %s", got)
	}
	fan.Emit(run.Start{Job: "a", RunID: "r1", Slot: t0, Started: t0, PID: 42, Deadline: t0.Add(time.Minute)})
	a := stateOf(t, s, "a")
	if a.State != ctl.StateRunning || a.RunID != "r1" || a.PID != 42 || !a.Deadline.Equal(t0.Add(time.Minute)) {
		t.Fatalf("running job: %+v", a)
	}
	fan.Emit(run.Skip{Job: "a", RunID: "r2", Slot: t0.Add(time.Second), Time: t0.Add(time.Second), Reason: "lock held by pid 42"})
	fan.Emit(run.End{Job: "a", RunID: "r1", Slot: t0, Started: t0, Ended: t0.Add(2 * time.Second), Outcome: run.Timeout})
	a = stateOf(t, s, "a")
	if a.State != ctl.StateIdle || a.LastOutcome != "timeout" || a.Counts.Runs != 1 || a.Counts.Skips != 1 || a.Counts.Failures != 1 {
		t.Fatalf("after the run: %+v", a)
	}
	if err := s.Pause(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if got := stateOf(t, s, "a"); got.State != ctl.StatePaused || !got.Paused {
		t.Fatalf("paused job: %+v", got)
	}
}

func TestActionsOnUnknownJob(t *testing.T) {
	s, _ := newTestService(t, job(t, "a", true))
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"pause":  func() error { return s.Pause(ctx, "nope") },
		"resume": func() error { return s.Resume(ctx, "nope") },
		"kill":   func() error { _, err := s.Kill(ctx, "nope", ctl.KillOptions{}); return err },
		"run":    func() error { _, err := s.RunNow(ctx, "nope", ctl.FireOptions{}); return err },
	} {
		if err := call(); !errors.Is(err, ctl.ErrUnknownJob) {
			t.Errorf("%s: %v, want ErrUnknownJob", name, err)
		}
	}
	if err := s.Reload(ctx); err == nil {
		t.Error("reload error not passed through")
	}
}

func TestSlowSubscriberNeverBlocks(t *testing.T) {
	s, fan := newTestService(t, job(t, "a", true))
	ch, cancel := s.Subscribe(context.Background())
	done := make(chan struct{})
	go func() {
		// Far more events than the buffer holds, with nobody reading.
		for i := 0; i < 3*subscriberBuffer; i++ {
			fan.Emit(run.Output{Job: "a", RunID: "r", Line: "x"})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("emitting blocked on a slow subscriber")
	}
	if n := len(ch); n != subscriberBuffer {
		t.Errorf("buffered %d events, want the buffer full (%d)", n, subscriberBuffer)
	}
	// The drop is said: the buffer's last event asks for a resync, and
	// once the subscriber reads, events flow again after it.
	var last ctl.WireEvent
	for range subscriberBuffer {
		last = <-ch
	}
	if last.Type != ctl.EventResync {
		t.Errorf("the full buffer's last event is %s, want %s", last.Type, ctl.EventResync)
	}
	fan.Emit(run.Output{Job: "a", RunID: "r", Line: "after"})
	if ev := <-ch; ev.Line != "after" {
		t.Errorf("after the resync got %+v, want the next event", ev)
	}
	cancel()
	for range ch { // drains, then ends: cancel closed the channel
	}
}

// TestPausesAreEvents: a client keeping its table from the stream learns
// of a pause from any other client.
func TestPausesAreEvents(t *testing.T) {
	s, _ := newTestService(t, job(t, "a", true))
	s.SetConfig(&config.Config{StateDir: t.TempDir(), Jobs: []config.Job{job(t, "a", true)}})
	ch, cancel := s.Subscribe(context.Background())
	defer cancel()
	ctx := context.Background()
	if err := s.Pause(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Resume(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []ctl.EventType{ctl.EventJobPaused, ctl.EventJobResumed} {
		if ev := <-ch; ev.Type != want || ev.Job != "a" {
			t.Errorf("event %+v, want %s of a", ev, want)
		}
	}
}

func TestJobsNamedIsTheJobsOfThoseNames(t *testing.T) {
	s, _ := newTestService(t, job(t, "a", true), job(t, "b", false), job(t, "c", true))
	all, err := s.Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.JobsNamed(context.Background(), []string{"c", "nope", "a"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []ctl.JobStatus{all[0], all[2]}; !reflect.DeepEqual(got, want) {
		t.Errorf("JobsNamed = %+v\nwant %+v", got, want)
	}
}

func TestRunNowRunsUnderTheLock(t *testing.T) {
	s, fan := newTestService(t, job(t, "a", true))
	finished := make(chan run.End, 1)
	fan.Listen(func(ev run.Event) {
		if f, ok := ev.(run.End); ok {
			finished <- f
		}
	})
	res, err := s.RunNow(context.Background(), "a", ctl.FireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := res.RunID
	if !res.Started {
		t.Errorf("run-now answered %+v, want started", res)
	}
	select {
	case f := <-finished:
		if f.RunID != id || f.Outcome != run.OK || !f.Manual {
			t.Fatalf("run-now finished %+v, want ok, manual, run id %s", f, id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run-now did not finish")
	}
	s.Wait()
}

// TestFailuresCountFailedSlots (issue 25): attempts that failed and were
// retried are runs, not failures; only a slot that ends failed counts.
func TestFailuresCountFailedSlots(t *testing.T) {
	s, fan := newTestService(t, job(t, "a", true))
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for i, o := range []run.Outcome{run.Failed, run.Failed, run.OK} {
		fan.Emit(run.End{Job: "a", RunID: "r" + strconv.Itoa(i), Slot: t0, Started: t0, Ended: t0.Add(time.Second),
			Outcome: o, Attempt: i + 1, Retrying: o != run.OK})
	}
	if c := stateOf(t, s, "a").Counts; c.Runs != 3 || c.Failures != 0 {
		t.Errorf("a slot that ended ok after two retries counts %d runs, %d failures; want 3, 0", c.Runs, c.Failures)
	}
	fan.Emit(run.End{Job: "a", RunID: "r9", Slot: t0.Add(time.Minute), Outcome: run.Failed, Attempt: 1})
	if c := stateOf(t, s, "a").Counts; c.Failures != 1 {
		t.Errorf("a slot that ended failed counts %d failures, want 1", c.Failures)
	}
	// A retried attempt whose retries were cut short in the backoff: its
	// end is restated (Amends), a failed slot but no further run.
	fan.Emit(run.End{Job: "a", RunID: "r10", Slot: t0.Add(2 * time.Minute), Outcome: run.Failed, Attempt: 1, Retrying: true})
	fan.Emit(run.End{Job: "a", RunID: "r10", Slot: t0.Add(2 * time.Minute), Outcome: run.Failed, Attempt: 1, Amends: true,
		Reason: "no retry: killed by operator"})
	if c := stateOf(t, s, "a").Counts; c.Runs != 5 || c.Failures != 2 {
		t.Errorf("a slot cut short in its backoff: %d runs, %d failures; want 5, 2", c.Runs, c.Failures)
	}
}
