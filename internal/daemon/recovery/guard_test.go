package recovery

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/harness/redistest"
	"cronvisor/internal/harness/testlog"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/file"
	"cronvisor/internal/lock/redis"
)

// guardedOrphan starts script in a process group of its own, tagged
// runID, holding lockFile (nil: none) as fd 3, as a run whose supervisor
// and keeper were SIGKILLed is left; it writes the run's guard file as
// its supervisor did (deadline timeout from now, kill_grace grace,
// lease the lease hand-off). The process is reaped in the background
// (a dead supervisor's run is reaped by init), and killed at cleanup.
func guardedOrphan(t *testing.T, dir, runID, script string, lockFile *os.File, timeout, grace time.Duration, lease []byte) (pid int, exited <-chan struct{}) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	if lockFile != nil {
		cmd.ExtraFiles = []*os.File{lockFile}
	}
	cmd.Env = append(os.Environ(), "CRONVISOR_RUN_ID="+runID)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-done })
	args := []string{"-tag", "CRONVISOR_RUN_ID=" + runID, "-grace", grace.String(), "-supervisor", itoa(deadPID),
		"-deadline", time.Now().Add(timeout).Format(time.RFC3339Nano), "-timeout", timeout.String(),
		"-end", statedir.Dir(dir).RunEnd(runID), "-job", "j", "-slot", started.Format(time.RFC3339Nano), "-attempt", "1"}
	if lockFile != nil {
		args = append(args, "-lock")
	}
	if lease != nil {
		args = append(args, "-lease", "-within", "1s")
	}
	data, err := json.Marshal(map[string]any{"written": time.Now(), "args": args, "lease": lease})
	if err != nil {
		t.Fatal(err)
	}
	path := statedir.Dir(dir).Guard(itoa(deadPID) + "-1-0") // the dead supervisor's first slot
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid, done
}

// awaitRecord waits for runID's row to be closed, at most bound.
func (f *fixture) awaitRecord(t *testing.T, runID string, bound time.Duration) run.Record {
	t.Helper()
	for end := time.Now().Add(bound); ; time.Sleep(20 * time.Millisecond) {
		if r, ok := f.row(t, runID); ok && r.Outcome.Final() {
			return r
		}
		if time.Now().After(end) {
			r, _ := f.row(t, runID)
			t.Fatalf("run %s not recorded within %v: %+v", runID, bound, r)
		}
	}
}

// TestGuardEndsAnOrphanAtItsDeadline: a dead supervisor's run whose
// keeper died too, holding its lock file, is ended at its own deadline
// by the next supervisor's Sweep (SIGTERM; SIGKILL after kill_grace for
// a run that ignores it) and recorded once, timeout; its guard file is
// gone then. A run that ends by itself before is recorded interrupted,
// exit unknown, as before guards.
func TestGuardEndsAnOrphanAtItsDeadline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, script string
		timeout      time.Duration
		want         run.Outcome
		endsBy       time.Duration // after the guard's start
	}{
		// By timeout + kill_grace + 1 s, as the issue asks of the binary.
		{"ends at SIGTERM", "sleep 30", 1500 * time.Millisecond, run.Timeout, 1500*time.Millisecond + 700*time.Millisecond + time.Second},
		{"ignores SIGTERM", "trap '' TERM; sleep 30 & wait; sleep 30", 1500 * time.Millisecond, run.Timeout, 1500*time.Millisecond + 700*time.Millisecond + time.Second},
		{"ends by itself", "sleep 0.5", time.Minute, run.Interrupted, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			runID := "guarded-" + strings.ReplaceAll(tc.name, " ", "-") // its tag: unique among the parallel tests' processes
			lease, err := file.NewLocker(filepath.Join(f.dir, "locks"), nil).Acquire(context.Background(), lock.Request{Name: "j",
				Record: lock.Record{Holder: run.Holder{Job: "j", RunID: runID, Since: started.Add(time.Second), PID: deadPID}, Slot: started, SupervisorPID: deadPID}})
			if err != nil {
				t.Fatal(err)
			}
			pid, exited := guardedOrphan(t, f.dir, runID, tc.script, lease.File, tc.timeout, 700*time.Millisecond, nil)
			if err := lease.SetPID(pid); err != nil { // as after the exec
				t.Fatal(err)
			}
			lease.File.Close() // its supervisor's descriptor died with it
			begin := time.Now()
			if _, err := f.r.Sweep(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, ok := f.r.Adopted(runID); !ok {
				t.Errorf("the guarded run is not adopted: status would not show it")
			}
			got := f.awaitRecord(t, runID, tc.endsBy+2*time.Second)
			took := time.Since(begin)
			select {
			case <-exited: // reaped here (the dead supervisor's init's job) an instant after its exit
			case <-time.After(time.Second):
				t.Fatalf("run recorded %s while its process still runs", got.Outcome)
			}
			t.Logf("recorded %s (%q) %v after the sweep", got.Outcome, got.Reason, took.Round(time.Millisecond))
			if got.Outcome != tc.want || got.ExitCode != nil {
				t.Errorf("recorded %+v, want %s, exit unknown", got, tc.want)
			}
			if tc.want == run.Timeout && !strings.Contains(got.Reason, "exceeded timeout "+tc.timeout.String()) {
				t.Errorf("reason %q, want it to say the timeout", got.Reason)
			}
			if took > tc.endsBy {
				t.Errorf("recorded %v after the sweep, want by %v", took, tc.endsBy)
			}
			if tc.want == run.Timeout && took < tc.timeout-100*time.Millisecond {
				t.Errorf("ended %v after the sweep, before its deadline %v", took, tc.timeout)
			}
			testlog.Eventually(t, 2*time.Second, "the dead supervisor's guard slot removed after the run's record", func() bool {
				_, err := os.Stat(statedir.Dir(f.dir).Guard(itoa(deadPID) + "-1-0"))
				return os.IsNotExist(err)
			})
		})
	}
}

// TestGuardKeepsAnOrphansLease: a dead supervisor's run under a Redis
// lease (ttl 1 s), its keeper dead too: the next supervisor takes the
// lease over from the guard file and renews it past its ttl, so no other
// holder can take the lock, ends the run at its deadline (3 s), records
// it timeout (its start row rebuilt from the guard file), and only then
// releases the lease.
func TestGuardKeepsAnOrphansLease(t *testing.T) {
	t.Parallel()
	srv := redistest.New(t)
	// A ttl well above a loaded machine's set-up time: the lease must not
	// lapse before the guard takes it over.
	const ttl, timeout = 2 * time.Second, 5 * time.Second
	dead, err := redis.NewRedisLocker(srv.URL(), ttl)
	if err != nil {
		t.Fatal(err)
	}
	g, err := dead.Acquire(context.Background(), lock.Request{Name: "j",
		Record: lock.Record{Holder: run.Holder{Job: "j", RunID: "guarded-lease", Since: time.Now(), PID: deadPID}, Slot: started, SupervisorPID: deadPID}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := redis.NewRedisLocker(srv.URL(), ttl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	f := newFixture(t, func(c *Config) { c.Locker = other })
	_, exited := guardedOrphan(t, f.dir, "guarded-lease", "sleep 30", nil, timeout, 500*time.Millisecond, g.Handoff)
	dead.Close() // the supervisor's death: nothing renews the lease now
	begin := time.Now()
	if _, err := f.r.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Past the ttl twice over, the lock is still the run's.
	time.Sleep(2 * ttl)
	st, err := other.Inspect(context.Background(), "j")
	if err != nil || !st.Held || st.Record.RunID != "guarded-lease" {
		t.Fatalf("lock after 2 ttl: %+v, %v; want still held by the guarded run", st, err)
	}
	if _, err := other.Acquire(context.Background(), lock.Request{Name: "j", Record: lock.Record{Holder: run.Holder{Job: "j", RunID: "r2"}}}); err == nil {
		t.Fatal("another holder took the lock of a guarded run")
	}
	got := f.awaitRecord(t, "guarded-lease", timeout+500*time.Millisecond+3*time.Second)
	took := time.Since(begin)
	<-exited
	t.Logf("recorded %s (%q) %v after the sweep", got.Outcome, got.Reason, took.Round(time.Millisecond))
	if got.Outcome != run.Timeout || !got.StartedAt.Before(begin) || got.SupervisorPID != deadPID {
		t.Errorf("recorded %+v, want timeout, its start rebuilt", got)
	}
	if took > timeout+500*time.Millisecond+time.Second {
		t.Errorf("recorded %v after the sweep, want by its deadline + grace + 1 s", took)
	}
	testlog.Eventually(t, 2*time.Second, "the lease released after the record", func() bool {
		st, err := other.Inspect(context.Background(), "j")
		return err == nil && !st.Held
	})
}

// TestGuardSlotsOfTheDeadAreRemoved: a Sweep removes the guard slots a
// dead supervisor left, free or naming a run nothing is left of, and
// leaves a live supervisor's alone, free or in use.
func TestGuardSlotsOfTheDeadAreRemoved(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	d := statedir.Dir(f.dir)
	inUse := func(supervisor int) string {
		args := []string{"-tag", "CRONVISOR_RUN_ID=gone-" + itoa(supervisor), "-grace", "1s", "-supervisor", itoa(supervisor), "-job", "j"}
		b, err := json.Marshal(map[string]any{"written": time.Now(), "args": args})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	slots := []struct {
		name, body string
		kept       bool
	}{
		{itoa(deadPID) + "-1-0", "-", false},
		{itoa(deadPID) + "-1-1", inUse(deadPID), false},
		{itoa(livePID) + "-1-0", "-", true},
		{itoa(livePID) + "-1-1", inUse(livePID), true},
	}
	if err := os.MkdirAll(d.Keepers(), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, s := range slots {
		if err := os.WriteFile(d.Guard(s.name), []byte(s.body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.r.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, s := range slots {
		_, err := os.Stat(d.Guard(s.name))
		if s.kept != (err == nil) {
			t.Errorf("slot %s (%.20q): kept %v, want %v", s.name, s.body, err == nil, s.kept)
		}
	}
}
