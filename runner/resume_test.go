package runner

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/schedule"
	"cronvisor/internal/config"
	"cronvisor/internal/harness/testlog"
	"cronvisor/internal/lock/file"
)

// TestHandOverLeavesRetriesAndTheNextSupervisorResumesThem: a supervisor
// handing over (SIGUSR2) while its slot waits for attempt 2 records and
// tells nothing more and lets go of the lock with its record saying when
// attempt 2 is due; the next supervisor on the state dir resumes the slot
// at that time, under the lock, despite the slot cursor, and the slot
// ends once, with attempt 2's end.
func TestHandOverLeavesRetriesAndTheNextSupervisorResumesThem(t *testing.T) {
	dir := t.TempDir()
	first, firstEv := newTestSupervisor(t, dir)
	j := failTwice(dir)
	j.Retries, j.RetryBackoff, j.RetryBackoffMax = 1, 300*time.Millisecond, 300*time.Millisecond
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	ch := make(chan run.End, 1)
	go func() { ch <- first.Fire(ctx, j, slotAt(0), false) }()
	testlog.Eventually(t, 10*time.Second, "the slot waiting for its retry", func() bool {
		return len(finishes(firstEv)) > 0 && first.waiting(j.Name)
	})
	first.HandingOver()
	stop()
	if f := recv(t, ch); !f.Detached {
		t.Fatalf("handing over: slot ended %+v; want it left (Detached)", f)
	}
	if all := finishes(firstEv); len(all) != 1 || !all[0].Retrying {
		t.Fatalf("first supervisor told %+v; want only attempt 1, retrying", all)
	}
	st, err := first.locker.Inspect(context.Background(), j.Lock)
	if err != nil || st.Held || st.Record.RetryAt.IsZero() || !st.Record.InFlight {
		t.Fatalf("lock after the hand-over: %+v, %v; want free, in flight, with retry_at", st, err)
	}

	next, nextEv := newTestSupervisor(t, dir)
	if err := next.ResumeRetries(context.Background(), j, slotAt(0), 1, st.Record.RetryAt, false); err != nil {
		t.Fatalf("ResumeRetries: %v", err)
	}
	all := finishes(nextEv)
	if len(all) != 1 || all[0].Attempt != 2 || all[0].Outcome != run.Failed || all[0].Retrying {
		t.Fatalf("next supervisor told %+v; want attempt 2's end, failed, the slot's last", all)
	}
	if s, ok := nextEv.started(all[0].RunID); !ok || s.Started.Before(st.Record.RetryAt) {
		t.Errorf("attempt 2 started %v; want at or after its planned %v", s.Started, st.Record.RetryAt)
	}
}

// TestResumeRefusesWhatTheRetriesWouldNotHaveRun: no attempt left, an
// attempt due at or after the next slot, and a kill during the wait are
// each an error, and nothing runs.
func TestResumeRefusesWhatTheRetriesWouldNotHaveRun(t *testing.T) {
	dir := t.TempDir()
	s, ev := newTestSupervisor(t, dir)
	j := shJob("r", "exit 1")
	j.Retries, j.RetryOn = 1, config.DefaultRetryOn
	if err := s.ResumeRetries(context.Background(), j, slotAt(0), 2, slotAt(1), false); err == nil {
		t.Error("attempt 2 of retries 1 resumed; want no attempt left")
	}
	j.Retries = 3
	every, err := schedule.Parse("@every 1m", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	j.Sched = every
	if err := s.ResumeRetries(context.Background(), j, slotAt(0), 1, slotAt(0).Add(time.Minute), false); err == nil {
		t.Error("an attempt due at the next slot resumed; want refused")
	}
	j.Sched = nil // unscheduled: no next slot comes first
	done := make(chan error, 1)
	go func() {
		done <- s.ResumeRetries(context.Background(), j, slotAt(0), 1, time.Now().Add(time.Minute), false)
	}()
	testlog.Eventually(t, 10*time.Second, "the resumed slot waiting", func() bool { return s.waiting("r") })
	s.Kill("r", ErrKilled)
	if err := <-done; !errors.Is(err, ErrKilled) {
		t.Errorf("killed while waiting: %v; want ErrKilled", err)
	}
	if n := len(finishes(ev)); n != 0 {
		t.Errorf("%d ends told; want none", n)
	}
	if st, _ := s.locker.Inspect(context.Background(), j.Lock); st.Held {
		t.Errorf("lock held after refusals: %+v", st)
	}
}

// TestKillAtAnAttemptsEndCancelsItsRetry: a kill that comes as soon as an
// attempt's end is told (an operator reading it, say) finds the slot's
// wait for its next attempt and cancels it; no further attempt runs.
func TestKillAtAnAttemptsEndCancelsItsRetry(t *testing.T) {
	dir := t.TempDir()
	var s *Supervisor
	ev := &events{}
	killed := -1
	s = NewSupervisor(file.NewLocker(filepath.Join(dir, "locks"), InRun), NopRecorder{}, func(e run.Event) {
		ev.emit(e)
		if end, ok := e.(run.End); ok && end.Retrying && killed < 0 {
			killed = s.Kill("r", ErrKilled)
		}
	})
	j := shJob("r", "exit 1")
	j.Retries, j.RetryBackoff, j.RetryBackoffMax, j.RetryOn = 2, time.Minute, time.Minute, config.DefaultRetryOn
	f := s.Fire(context.Background(), j, slotAt(0), false)
	if killed < 1 { // the attempt, not yet retired, is counted too
		t.Errorf("kill at the attempt's end signalled %d; want the waiting slot among them", killed)
	}
	if f.Attempt != 1 || f.Reason != "no retry: killed by operator" {
		t.Errorf("slot ended at attempt %d (%q); want attempt 1, no retry: killed by operator", f.Attempt, f.Reason)
	}
}
