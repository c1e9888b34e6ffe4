package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/harness/testlog"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/semaphore"
)

// usesJob is shJob using the given resources.
func usesJob(name, script string, uses ...config.Use) config.Job {
	j := shJob(name, script)
	j.Uses = uses
	return j
}

func one(resource string) config.Use { return config.Use{Resource: resource, Weight: 1} }

// skipOf returns the recorded skip of runID.
func (r *fakeRecorder) skipOf(runID string) (run.Skip, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ev := range r.events {
		if s, ok := ev.(run.Skip); ok && s.RunID == runID {
			return s, true
		}
	}
	return run.Skip{}, false
}

// TestSlotsOfARun: a run holds its slots from before its start to after
// its end is recorded: its Start names them, its environment and fds 5,
// 6 hold them (after the lock's 3 and the heartbeat's 4), its process's
// pid is in their records, and they are free once Fire returns.
func TestSlotsOfARun(t *testing.T) {
	dir := t.TempDir()
	sems := newFakeSems(t.TempDir(), map[string]int{"db": 2, "disk": 1})
	rec := newFakeRecorder()
	var seen map[string]int
	rec.finished = func(run.End) error {
		sems.mu.Lock()
		seen = maps2(sems.pids)
		sems.mu.Unlock()
		return nil
	}
	s, ev := newRecordedSupervisor(t, dir, rec, WithSemaphores(sems))
	script := `echo "$CRONVISOR_RESOURCES"; ls -1 /proc/$$/fd | tr '\n' ' '; readlink /proc/$$/fd/5 /proc/$$/fd/6 /proc/$$/fd/7`
	j := usesJob("a", script, config.Use{Resource: "db", Weight: 2}, one("disk"))
	end := recv(t, fireAsync(s, j, slotAt(0)))
	if end.Outcome != run.OK {
		t.Fatalf("outcome %s (%s)", end.Outcome, end.Reason)
	}
	out := ev.output(end.RunID)
	joined := strings.Join(out, "\n")
	if !strings.HasPrefix(joined, "db/0 db/1 disk/0\n") {
		t.Errorf("CRONVISOR_RESOURCES: output %q, want db/0 db/1 disk/0 first", joined)
	}
	for _, want := range []string{"3 4 5 6 7", "db.0\n", "db.1\n", "disk.0"} {
		if !strings.Contains(joined, want) {
			t.Errorf("output %q lacks %q", joined, want)
		}
	}
	st, _ := ev.started(end.RunID)
	if !slices.Equal(st.Resources, []string{"db/0", "db/1", "disk/0"}) || st.ResourceWait != 0 {
		t.Errorf("Start: resources %q wait %v", st.Resources, st.ResourceWait)
	}
	if seen["db/0"] != end.PID || seen["disk/0"] != end.PID || end.PID == 0 {
		t.Errorf("slots' pids at the end's record %v, want the run's %d", seen, end.PID)
	}
	if n := sems.heldCount(); n != 0 {
		t.Errorf("%d slots held after the fire", n)
	}
	if len(sems.errs) > 0 {
		t.Errorf("misuse: %q", sems.errs)
	}
}

func maps2(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestResourceFull: a fire whose resource is full is skipped, class
// resource_full, naming the holders, with its lock released first; a
// manual fire never waits; on_full: wait waits, tells run.Waiting, and
// runs when a slot frees, or skips after max_wait with its wait.
func TestResourceFull(t *testing.T) {
	other := &run.Holder{Job: "export_b", Host: "host-c", RunID: "r1", Since: time.Date(2026, 6, 1, 10, 4, 0, 0, time.Local)}
	waitJob := func(max time.Duration) config.Job {
		j := usesJob("w", "true", one("db"))
		j.OnFull, j.MaxWait = config.OnFullWait, max
		return j
	}
	for _, tc := range []struct {
		name      string
		job       config.Job
		manual    bool
		freeAfter time.Duration // 0: never
		outcome   run.Outcome
		reason    string
		waited    bool
	}{
		{"skip", usesJob("s", "true", one("db")), false, 0, run.Skipped, "resource db full: held by export_b on host-c since 10:04:00", false},
		{"manual never waits", waitJob(time.Minute), true, 0, run.Skipped, "resource db full: held by", false},
		{"wait gives up", waitJob(150 * time.Millisecond), false, 0, run.Skipped, "resource db full after waiting", true},
		{"wait takes", waitJob(10 * time.Second), false, 100 * time.Millisecond, run.OK, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sems := newFakeSems("", map[string]int{"db": 1})
			sems.hold("db", 0, other)
			rec := newFakeRecorder()
			s, ev := newRecordedSupervisor(t, dir, rec, WithSemaphores(sems))
			if tc.freeAfter > 0 {
				time.AfterFunc(tc.freeAfter, func() { sems.hold("db", 0, nil) })
			}
			end := s.Fire(context.Background(), tc.job, slotAt(0), tc.manual)
			if end.Outcome != tc.outcome || !strings.Contains(end.Reason, tc.reason) {
				t.Fatalf("end %s %q, want %s %q", end.Outcome, end.Reason, tc.outcome, tc.reason)
			}
			if err := tryLock(dir, tc.job.Lock); err != nil {
				t.Errorf("the lock after the fire: %v", err)
			}
			waiting := 0
			for _, e := range ev.all {
				if w, ok := e.(run.Waiting); ok && w.Resource == "db" && w.Held == 1 && w.Size == 1 {
					waiting++
				}
			}
			if want := map[bool]int{true: 1}[tc.waited]; waiting != want {
				t.Errorf("%d Waiting events, want %d", waiting, want)
			}
			var wait time.Duration
			if sk, ok := rec.skipOf(end.RunID); ok {
				if sk.Class != run.ClassResourceFull {
					t.Errorf("skip class %q", sk.Class)
				}
				wait = sk.ResourceWait
			} else if st, ok := ev.started(end.RunID); ok {
				wait = st.ResourceWait
			}
			if tc.waited != (wait > 0) {
				t.Errorf("resource wait %v, want one: %v", wait, tc.waited)
			}
		})
	}
}

// TestKillEndsAResourceWait: a kill of a job whose fire waits for a
// slot ends the wait at once: the fire is recorded skipped, class
// killed, its wait recorded, its lock free; KillJob counts it apart.
func TestKillEndsAResourceWait(t *testing.T) {
	dir := t.TempDir()
	sems := newFakeSems("", map[string]int{"db": 1})
	sems.hold("db", 0, &run.Holder{Job: "export_b", Host: "host-c", RunID: "r1", Since: time.Now()})
	rec := newFakeRecorder()
	s, ev := newRecordedSupervisor(t, dir, rec, WithSemaphores(sems))
	j := usesJob("w", "true", one("db"))
	j.OnFull, j.MaxWait = config.OnFullWait, time.Minute
	done := fireAsync(s, j, slotAt(0))
	for deadline := time.Now().Add(5 * time.Second); !ev.waiting("w"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the fire never waited")
		}
	}
	began := time.Now()
	if k := s.KillJob("w", ErrKilled); k != (Killed{SlotWaits: 1}) {
		t.Errorf("KillJob = %+v, want one slot wait", k)
	}
	end := recv(t, done)
	if took := time.Since(began); took > time.Second {
		t.Errorf("the wait ended %v after the kill", took)
	}
	sk, ok := rec.skipOf(end.RunID)
	if end.Outcome != run.Skipped || !ok || sk.Class != run.ClassKilled ||
		end.Reason != "killed by operator while waiting for db" || sk.ResourceWait <= 0 {
		t.Errorf("end %s %q, skip %+v (recorded %v); want skipped, class killed, its wait", end.Outcome, end.Reason, sk, ok)
	}
	if err := tryLock(dir, j.Lock); err != nil {
		t.Errorf("the lock after the kill: %v", err)
	}
}

// TestSlotsKeptAcrossRetries: a slot's attempts hold the slots taken
// once, released after the last; each attempt's run is named in them.
func TestSlotsKeptAcrossRetries(t *testing.T) {
	sems := newFakeSems("", map[string]int{"db": 1})
	s, ev := newTestSupervisor(t, t.TempDir(), WithSemaphores(sems))
	j := usesJob("r", "exit 3", one("db"))
	j.Retries, j.RetryOn, j.RetryBackoff, j.RetryBackoffMax = 2, config.RetryOn{Failed: true}, 10*time.Millisecond, 10*time.Millisecond
	end := recv(t, fireAsync(s, j, slotAt(0)))
	if end.Outcome != run.Failed || end.Attempt != 3 {
		t.Fatalf("end %s attempt %d (%s)", end.Outcome, end.Attempt, end.Reason)
	}
	starts := 0
	var runIDs []string
	for _, e := range ev.all {
		if st, ok := e.(run.Start); ok && slices.Equal(st.Resources, []string{"db/0"}) {
			starts++
			runIDs = append(runIDs, st.RunID)
		}
	}
	if starts != 3 || sems.takes != 1 || sems.heldCount() != 0 {
		t.Errorf("%d starts holding db/0, %d takes, %d held after; want 3, 1, 0", starts, sems.takes, sems.heldCount())
	}
	if !slices.Equal(sems.named, runIDs) || len(slices.Compact(slices.Clone(runIDs))) != 3 {
		t.Errorf("the slot named runs %v, want each attempt's own: %v", sems.named, runIDs)
	}
}

// TestSlotsWithoutSemaphores: a job using resources in a supervisor
// given none is not started, and says why.
func TestSlotsWithoutSemaphores(t *testing.T) {
	s, _ := newTestSupervisor(t, t.TempDir())
	end := recv(t, fireAsync(s, usesJob("n", "true", one("db")), slotAt(0)))
	if end.Outcome != run.Error || !strings.Contains(end.Reason, "not started: cannot take resource slots: this supervisor has no resources") {
		t.Errorf("end %s %q", end.Outcome, end.Reason)
	}
}

// TestAllowJobTakesSlots: overlap allow takes no lock but its slots.
func TestAllowJobTakesSlots(t *testing.T) {
	sems := newFakeSems("", map[string]int{"db": 1})
	s, ev := newTestSupervisor(t, t.TempDir(), WithSemaphores(sems))
	j := usesJob("al", "sleep 5", one("db"))
	j.Overlap = config.OverlapAllow
	first := fireAsync(s, j, slotAt(0))
	r := waitRunning(t, s, ev, "al")
	second := s.Fire(context.Background(), j, slotAt(1), false)
	if second.Outcome != run.Skipped || !strings.Contains(second.Reason, "resource db full: held by al") {
		t.Errorf("second fire %s %q, want skipped for db", second.Outcome, second.Reason)
	}
	s.Kill("al", ErrKilled)
	if end := recv(t, first); end.RunID != r.RunID || sems.heldCount() != 0 {
		t.Errorf("first fire %s, %d held after", end.RunID, sems.heldCount())
	}
}

// TestKeeperLease: the keeper gets one hand-off of every Redis lease,
// combined, or ends the run at once when they cannot be.
func TestKeeperLease(t *testing.T) {
	lockG := lock.Grant{Handoff: []byte("lock"), MinLifeLeft: 5 * time.Second}
	held := &semaphore.Held{Slots: []string{"db/0"}, Grants: []lock.Grant{{Handoff: []byte("db/0"), MinLifeLeft: 2 * time.Second}}}
	join := func(hs ...[]byte) []byte {
		return []byte(strings.Join(func() []string {
			var out []string
			for _, h := range hs {
				out = append(out, string(h))
			}
			return out
		}(), "+"))
	}
	s := &Supervisor{combine: join}
	g := s.keeperLease(&fire{grant: lockG, held: held})
	if string(g.Handoff) != "lock+db/0" || g.MinLifeLeft != 2*time.Second || g.Tethered {
		t.Errorf("combined: %q %v tethered %v", g.Handoff, g.MinLifeLeft, g.Tethered)
	}
	s.combine = nil
	if g := s.keeperLease(&fire{grant: lockG, held: held}); g.Handoff != nil || !g.Tethered {
		t.Errorf("without a combiner: %q tethered %v, want none and tethered", g.Handoff, g.Tethered)
	}
	if g := s.keeperLease(&fire{held: held}); string(g.Handoff) != "db/0" || g.Tethered {
		t.Errorf("allow job: %q tethered %v, want the slot's alone", g.Handoff, g.Tethered)
	}
}

// TestOppositeOrders: jobs using [a, b] and [b, a] (one slot each), fired
// 1,000 times with real processes, half of them waiting when full, end
// within a bound (no deadlock: slots are taken in name order and never
// held while waiting), each fire recorded exactly once, ran or skipped,
// and every slot free at the end.
func TestOppositeOrders(t *testing.T) {
	const fires, parallel = 1000, 32
	sems := newOrdersSems(t)
	rec := newFakeRecorder()
	s, _ := newRecordedSupervisor(t, t.TempDir(), rec, WithSemaphores(sems))
	jobs := [2]config.Job{usesJob("ab", "true", one("a"), one("b")), usesJob("ba", "true", one("b"), one("a"))}
	for i := range jobs {
		jobs[i].Overlap = config.OverlapAllow // no lock: the fires meet at the slots alone
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sem := make(chan struct{}, parallel)
	done := make(chan run.End, fires)
	for i := range fires {
		j := jobs[i%2]
		if i%4 >= 2 {
			j.OnFull, j.MaxWait = config.OnFullWait, 2*time.Second
		}
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			done <- s.FireWithID(ctx, j, slotAt(0), false, fmt.Sprintf("fire-%04d", i))
		}()
	}
	ran, skipped := 0, 0
	for range fires {
		select {
		case end := <-done:
			switch {
			case end.Outcome == run.OK:
				ran++
			case end.Outcome == run.Skipped && strings.HasPrefix(end.Reason, "resource "):
				skipped++
			default:
				t.Fatalf("%s: %s %q", end.RunID, end.Outcome, end.Reason)
			}
		case <-ctx.Done():
			t.Fatalf("%d of %d fires ended in time: a deadlock", ran+skipped, fires)
		}
	}
	records := map[string]int{}
	for _, e := range rec.recorded() {
		switch ev := e.(type) {
		case run.End:
			records[ev.RunID]++
		case run.Skip:
			records[ev.RunID]++
		}
	}
	for i := range fires {
		if id := fmt.Sprintf("fire-%04d", i); records[id] != 1 {
			t.Errorf("%s recorded %d times", id, records[id])
		}
	}
	if len(records) != fires || ran == 0 {
		t.Errorf("%d fires recorded, %d ran, %d skipped", len(records), ran, skipped)
	}
	if n := sems.heldCount(); n != 0 {
		t.Errorf("%d slots held after every fire ended", n)
	}
	t.Logf("%d ran, %d skipped", ran, skipped)
}

// recorded is every event recorded so far.
func (r *fakeRecorder) recorded() []run.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// TestLostSlotEndsTheRun: a slot's lease lost during the run (a Redis
// slot that expired) ends the run as a lost lock does.
func TestLostSlotEndsTheRun(t *testing.T) {
	sems := newFakeSems("", map[string]int{"db": 1})
	sems.lost = make(chan struct{})
	s, ev := newTestSupervisor(t, t.TempDir(), WithSemaphores(sems))
	ch := fireAsync(s, usesJob("l", "sleep 10", one("db")), slotAt(0))
	waitRunning(t, s, ev, "l")
	close(sems.lost)
	end := recv(t, ch)
	if end.Outcome != run.Interrupted || end.Class != run.ClassLockLost {
		t.Errorf("end %s class %q (%s), want interrupted, lock_lost", end.Outcome, end.Class, end.Reason)
	}
	if sems.heldCount() != 0 {
		t.Errorf("%d slots held after the run", sems.heldCount())
	}
}

// TestSlotsOnTheFileBackend: with the real file semaphores, a run's fd 5
// is its slot's file under STATE_DIR/resources, held while it runs
// (another fire finds the resource full, naming the run) and free once
// its fire returns.
func TestSlotsOnTheFileBackend(t *testing.T) {
	sems := newOrdersSems(t)
	s, ev := newTestSupervisor(t, t.TempDir(), WithSemaphores(sems))
	ch := fireAsync(s, usesJob("f", `readlink /proc/$$/fd/5; sleep 10`, one("a")), slotAt(0))
	r := waitRunning(t, s, ev, "f")
	other := s.Fire(context.Background(), usesJob("g", "true", one("a")), slotAt(1), false)
	if other.Outcome != run.Skipped || !strings.Contains(other.Reason, "resource a full: held by f on ") {
		t.Errorf("the other fire: %s %q, want skipped, a held by f", other.Outcome, other.Reason)
	}
	testlog.Eventually(t, 10*time.Second, "fd 5 printed", func() bool { return len(ev.output(r.RunID)) > 0 })
	s.Kill("f", ErrKilled)
	end := recv(t, ch)
	if out := strings.Join(ev.output(r.RunID), "\n"); !strings.HasSuffix(strings.TrimSpace(out), "/resources/a.0.lock") {
		t.Errorf("fd 5 is %q, want the slot's file resources/a.0.lock", out)
	}
	if end.RunID != r.RunID || sems.heldCount() != 0 {
		t.Errorf("end %s, %d slots held after it", end.RunID, sems.heldCount())
	}
}
