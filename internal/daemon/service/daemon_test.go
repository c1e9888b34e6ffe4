package service

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/file"
	"cronvisor/runner"
)

// TestRunNowSaysWhatTheFireDid: a run-now of a job whose lock is held
// answers with the skip and its reason, not a started run.
func TestRunNowSaysWhatTheFireDid(t *testing.T) {
	s, _ := newTestService(t, job(t, "a", true))
	lease, err := s.locker.Acquire(context.Background(), lock.Request{Name: "a",
		Record: lock.Record{Holder: run.Holder{Job: "other", RunID: "r-other"}}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.RunNow(context.Background(), "a", ctl.FireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Started || res.Outcome != "skipped" || !strings.Contains(res.Reason, "lock held by") || res.RunID == "" {
		t.Errorf("run-now answered %+v, want skipped with the holder as reason", res)
	}
	s.Wait()
	if err := lease.Release(); err != nil {
		t.Fatal(err)
	}
	res, err = s.RunNow(context.Background(), "a", ctl.FireOptions{})
	if err != nil || !res.Started {
		t.Errorf("run-now of a free job answered %+v, %v; want started", res, err)
	}
	s.Wait()
}

// TestPausesSurviveARestart: a pause is saved in the state dir with who
// paused and when; a new service on the same state dir (the restarted
// daemon) has the job paused, and a resume is saved too.
func TestPausesSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	start := func() *Service {
		locker := file.NewLocker(filepath.Join(dir, "locks"), runner.InRun)
		sup := runner.NewSupervisor(locker, runner.NopRecorder{}, func(run.Event) {})
		s, err := New(sup, locker, &config.Config{StateDir: dir, Jobs: []config.Job{job(t, "a", true)}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := start()
	before := time.Now()
	if err := s.Pause(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	var saved map[string]ctl.PauseInfo
	b, err := os.ReadFile(statedir.Dir(dir).Pauses())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	p := saved["a"]
	if p.UID != os.Getuid() || p.PID != os.Getpid() || p.User == "" || p.Via != "embedded console" || p.At.Before(before.Add(-time.Second)) {
		t.Errorf("saved pause %+v, want this process, its user, the embedded console, now", p)
	}

	restarted := start()
	js := stateOf(t, restarted, "a")
	if js.State != ctl.StatePaused || js.PausedBy == nil || js.PausedBy.User != p.User || !js.PausedBy.At.Equal(p.At) {
		t.Errorf("after a restart: state %s paused by %+v, want paused by %+v", js.State, js.PausedBy, p)
	}
	if err := restarted.Resume(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if js := stateOf(t, start(), "a"); js.State != ctl.StateIdle || js.PausedBy != nil {
		t.Errorf("after resume and a restart: state %s paused by %+v, want idle", js.State, js.PausedBy)
	}
}

// TestDaemonsSharingAStateDirKeepEachOthersPauses: each change reads the
// file as it is, so a daemon that started before another's pause does not
// write it away.
func TestDaemonsSharingAStateDirKeepEachOthersPauses(t *testing.T) {
	dir := t.TempDir()
	start := func() *Service {
		locker := file.NewLocker(filepath.Join(dir, "locks"), runner.InRun)
		sup := runner.NewSupervisor(locker, runner.NopRecorder{}, func(run.Event) {})
		s, err := New(sup, locker, &config.Config{StateDir: dir, Jobs: []config.Job{job(t, "x", true), job(t, "y", true)}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := start(), start()
	ctx := context.Background()
	if err := a.Pause(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if err := b.Pause(ctx, "y"); err != nil {
		t.Fatal(err)
	}
	if err := b.Resume(ctx, "y"); err != nil {
		t.Fatal(err)
	}
	saved, err := LoadPauses(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := saved["x"]; !ok || len(saved) != 1 {
		t.Errorf("saved pauses %v, want x's alone", saved)
	}
}

// TestAPeerIsWhoPaused: over the control socket, the pause names the
// process at the other end, here this test.
func TestAPeerIsWhoPaused(t *testing.T) {
	s, _ := newTestService(t, job(t, "a", true))
	dir, err := os.MkdirTemp("", "cv-peer-") // short: a socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "s.sock")
	ln, err := ctl.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- ctl.Serve(ctx, ln, s, nil) }()
	t.Cleanup(func() { cancel(); <-served })
	c, err := ctl.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Pause(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	got := stateOf(t, s, "a").PausedBy
	if got == nil || got.UID != os.Getuid() || got.PID != os.Getpid() || got.Via == "" || got.Via == "embedded console" {
		t.Errorf("paused by %+v, want this test's uid, pid and program", got)
	}
}

// TestDrainIsReported: a draining daemon says so, with the runs it
// waits for, to subscribers and in Daemon; it refuses new runs.
func TestDrainIsReported(t *testing.T) {
	s, fan := newTestService(t, job(t, "a", true), job(t, "b", true))
	ch, unsubscribe := s.Subscribe(context.Background())
	defer unsubscribe()
	fan.Emit(run.Start{Job: "a", RunID: "r1", Started: time.Now(), PID: 1})
	<-ch
	s.Drain()
	select {
	case ev := <-ch:
		if ev.Type != ctl.EventShuttingDown || ev.Jobs != 1 {
			t.Errorf("event %+v, want shutting_down with 1 run", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no shutting_down event")
	}
	d, err := s.Daemon(context.Background())
	if err != nil || !d.ShuttingDown || d.Finishing != 1 || d.PID != os.Getpid() {
		t.Errorf("Daemon() = %+v, %v; want shutting down, 1 finishing", d, err)
	}
	res, err := s.RunNow(context.Background(), "b", ctl.FireOptions{})
	if err != nil || res.Started || res.Outcome != "refused" {
		t.Errorf("run-now while draining answered %+v, %v; want refused", res, err)
	}
}

// TestRefusedReloadStaysUntilAGoodOne: Daemon reports a refused reload's
// problems until a reload succeeds.
func TestRefusedReloadStaysUntilAGoodOne(t *testing.T) {
	s, fan := newTestService(t, job(t, "a", true))
	problems := []string{"jobs.yaml:3:5: unknown key", "jobs.yaml:9:14: bad duration"}
	fan.Emit(run.Reload{Time: time.Unix(100, 0), Jobs: 1, Problems: problems})
	fan.Emit(run.Start{Job: "a", RunID: "r1"}) // other events leave it
	d, _ := s.Daemon(context.Background())
	if len(d.Refused) != 2 || d.Refused[1] != problems[1] || !d.RefusedAt.Equal(time.Unix(100, 0)) {
		t.Errorf("Daemon().Refused = %q at %v, want both problems", d.Refused, d.RefusedAt)
	}
	fan.Emit(run.Reload{Time: time.Unix(200, 0), Jobs: 1})
	if d, _ := s.Daemon(context.Background()); d.Refused != nil {
		t.Errorf("after a good reload Refused = %q, want none", d.Refused)
	}
}

// TestTriggerKeepsThePolicy: a trigger queues behind a held lock
// (overlap: queue), unlike run-now; Drain ends that wait.
func TestTriggerKeepsThePolicy(t *testing.T) {
	queued := job(t, "q", true)
	queued.Overlap = config.OverlapQueue
	s, _ := newTestService(t, queued)
	ctx := context.Background()
	lease, err := s.locker.Acquire(ctx, lock.Request{Name: "q", Record: lock.Record{Holder: run.Holder{Job: "other", RunID: "r-other"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if res, err := s.Trigger(short, "q", ctl.FireOptions{}); err != nil || res.Started || res.Outcome != "" || res.RunID == "" {
		t.Errorf("trigger behind a held lock answered %+v, %v; want still waiting", res, err)
	}
	s.Drain()
	waited := make(chan struct{})
	go func() { s.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("a queued trigger still waits for its lock after Drain")
	}
	if _, err := s.Trigger(ctx, "nope", ctl.FireOptions{}); !errors.Is(err, ctl.ErrUnknownJob) {
		t.Errorf("trigger of an unknown job: %v, want ErrUnknownJob", err)
	}
}
