package service

import (
	"context"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/schedule"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
)

// stubborn is a job whose run ignores SIGTERM, so that only the SIGKILL
// at the end of its kill_grace ends it.
func stubborn(t *testing.T, grace time.Duration) (*Service, string) {
	t.Helper()
	j := job(t, "stubborn", true)
	j.Command, j.KillGrace = []string{"/bin/sh", "-c", "trap '' TERM; sleep 30"}, grace
	s, _ := newTestService(t, j)
	t.Cleanup(s.Wait)
	res, err := s.RunNow(context.Background(), j.Name, ctl.FireOptions{})
	if err != nil || !res.Started {
		t.Fatalf("run-now: %+v, %v", res, err)
	}
	return s, res.RunID
}

// TestKillTellsTheTruth: a kill of a run that ignores SIGTERM answers
// once the SIGKILL at its grace's end has ended it, recorded
// interrupted; a second kill meanwhile says at once that the run is
// already being ended and when SIGKILL falls; a kill after its end, or
// of a job with nothing running, concerns nothing.
func TestKillTellsTheTruth(t *testing.T) {
	const grace = 600 * time.Millisecond
	s, runID := stubborn(t, grace)
	ctx := context.Background()
	type answer struct {
		res  ctl.KillResult
		took time.Duration
	}
	first := make(chan answer, 1)
	start := time.Now()
	go func() {
		res, err := s.Kill(ctx, "stubborn", ctl.KillOptions{})
		if err != nil {
			t.Error(err)
		}
		first <- answer{res, time.Since(start)}
	}()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for limit := time.After(5 * time.Second); !s.kills.signalled(runID); {
		select {
		case <-tick.C:
		case <-limit:
			t.Fatal("the first kill did not signal the run")
		}
	}
	t0 := time.Now()
	second, err := s.Kill(ctx, "stubborn", ctl.KillOptions{})
	if took := time.Since(t0); err != nil || took > grace/2 {
		t.Fatalf("second kill: %v after %v, want an answer at once", err, took)
	}
	if len(second.Runs) != 1 || !second.Runs[0].Already || second.Runs[0].Ended || !second.Runs[0].KillAt.After(second.Now) || second.Killed != 1 {
		t.Errorf("second kill: %+v, want the run already being ended, SIGKILL to come", second)
	}
	var a answer
	select {
	case a = <-first:
	case <-time.After(grace + killMargin + 5*time.Second):
		t.Fatal("the first kill did not answer")
	}
	k := a.res.Runs
	if len(k) != 1 || !k[0].Ended || k[0].Outcome != run.Interrupted || k[0].Already || a.res.Killed != 1 {
		t.Errorf("first kill: %+v, want the run ended interrupted", a.res)
	}
	if a.took < grace {
		t.Errorf("first kill answered after %v, before the SIGKILL due after %v", a.took, grace)
	}
	if len(k) == 1 && !k[0].KillAt.Equal(second.Runs[0].KillAt) {
		t.Errorf("SIGKILL due at %v by the first kill, %v by the second", k[0].KillAt, second.Runs[0].KillAt)
	}
	if third, err := s.Kill(ctx, "stubborn", ctl.KillOptions{}); err != nil || third.Killed != 0 || len(third.Runs) != 0 {
		t.Errorf("kill after the end: %+v, %v; want nothing killed", third, err)
	}
}

// TestKillWithoutWaiting: with NoWait the answer comes once the run is
// signalled, still going, with its SIGKILL due at the grace's end.
func TestKillWithoutWaiting(t *testing.T) {
	const grace = 2 * time.Second
	s, runID := stubborn(t, grace)
	t0 := time.Now()
	res, err := s.Kill(context.Background(), "stubborn", ctl.KillOptions{NoWait: true})
	if err != nil || time.Since(t0) > grace/2 {
		t.Fatalf("kill: %v after %v, want an answer at once", err, time.Since(t0))
	}
	if len(res.Runs) != 1 || res.Runs[0].RunID != runID || res.Runs[0].Ended || res.Runs[0].Already ||
		res.Runs[0].KillAt.Sub(res.Runs[0].SignalledAt) != grace {
		t.Errorf("kill: %+v, want the run signalled, SIGKILL due %v later", res, grace)
	}
}

// TestKillEndsARetryWait: a kill of a job whose slot waits between
// attempts, no run in flight, cancels the further attempts and says so;
// nothing else of the job runs then, and the next kill concerns nothing.
func TestKillEndsARetryWait(t *testing.T) {
	j := job(t, "flaky", true)
	j.Command = []string{"false"}
	// A backoff long enough for the test, short enough that a failed
	// one's cleanup (s.Wait) does not hang.
	j.Retries, j.RetryBackoff, j.RetryBackoffMax, j.RetryOn = 1, 5*time.Second, 5*time.Second, config.DefaultRetryOn
	// No retry is planned that would start at or after the job's next
	// slot: @hourly's is within the 5-s backoff for the last 5 s of every
	// hour, a leap day's midnight almost never.
	sched, err := schedule.Parse("0 0 29 2 *", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	j.Schedule, j.Sched = "0 0 29 2 *", sched
	s, _ := newTestService(t, j)
	t.Cleanup(s.Wait)
	ctx := context.Background()
	events, stop := s.Subscribe(ctx)
	defer stop()
	if res, err := s.Trigger(ctx, "flaky", ctl.FireOptions{}); err != nil || !res.Started {
		t.Fatalf("trigger: %+v, %v", res, err)
	}
	for limit := time.After(10 * time.Second); ; {
		var ev ctl.WireEvent
		select {
		case ev = <-events:
		case <-limit:
			t.Fatal("the first attempt did not end retrying")
		}
		if ev.Type == ctl.EventRunFinished && ev.Retrying {
			break
		}
	}
	// The attempt's end is told just before its slot starts to wait: a
	// kill in between finds the attempt ended, or nothing, and leaves the
	// wait to come.
	var res ctl.KillResult
	for limit := time.Now().Add(3 * time.Second); time.Now().Before(limit); {
		if res, err = s.Kill(ctx, "flaky", ctl.KillOptions{}); err != nil || res.RetriesCancelled > 0 {
			break
		}
	}
	if err != nil || res.RetriesCancelled != 1 || len(res.Runs) != 0 || res.Killed != 1 {
		t.Errorf("kill in the backoff: %+v, %v; want one retry wait cancelled", res, err)
	}
	s.Wait()
	if res, err := s.Kill(ctx, "flaky", ctl.KillOptions{}); err != nil || res.Killed != 0 {
		t.Errorf("kill after: %+v, %v; want nothing killed", res, err)
	}
}

// signalled reports whether a kill has signalled run runID.
func (b *killBook) signalled(runID string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.runs[runID]
	return ok
}
