package runner

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
	"cronvisor/internal/harness/testlog"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/file"
	"cronvisor/internal/proc"
)

// tetheredLocker hands out leases that nothing of the run holds, as Redis
// does: no file, MinLifeLeft of life left at worst, lost when the test
// closes lost.
type tetheredLocker struct {
	lock.Locker
	lost chan struct{}
}

func (l *tetheredLocker) Acquire(ctx context.Context, req lock.Request) (lock.Grant, error) {
	g, err := l.Locker.Acquire(ctx, req)
	if err != nil {
		return g, err
	}
	g.File, g.Lost, g.Tethered, g.MinLifeLeft = nil, l.lost, true, 400*time.Millisecond
	return g, nil
}

func newTetheredSupervisor(t *testing.T) (*Supervisor, *events, *tetheredLocker) {
	tl := &tetheredLocker{Locker: file.NewLocker(filepath.Join(t.TempDir(), "locks"), InRun), lost: make(chan struct{})}
	ev := &events{}
	return NewSupervisor(tl, NopRecorder{}, ev.emit), ev, tl
}

// guardsOf lists the live guard processes of run id.
func guardsOf(runID string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if !strings.HasPrefix(string(b), proc.KeeperName+"\x00") {
			continue
		}
		runs, _ := proc.KeptRuns(pid)
		for _, r := range runs {
			if r.RunID == runID {
				out = append(out, pid)
			}
		}
	}
	return out
}

func TestTetheredLeaseRunsUnderAGuard(t *testing.T) {
	s, ev, _ := newTetheredSupervisor(t)
	j := shJob("tethered", `echo "job=$CRONVISOR_JOB fd=${CRONVISOR_LOCK_FD:-none} test=$CRONVISOR_TEST"; sleep 1; exit 4`)
	done := fireAsync(s, j, slotAt(0))
	active := waitRunning(t, s, ev, "tethered")
	// The hand-over waits in the keeper's socket until it reads it; only
	// then does the keeper answer for the run.
	var guards []int
	if !testlog.Poll(800*time.Millisecond, func() bool { guards = guardsOf(active.RunID); return len(guards) > 0 }) || len(guards) != 1 {
		t.Errorf("guards of run %s: %v, want one", active.RunID, guards)
	}
	f := recv(t, done)
	if f.Outcome != run.Failed || f.ExitCode == nil || *f.ExitCode != 4 {
		t.Errorf("outcome %s code %v, want failed with the job's exit code 4", f.Outcome, f.ExitCode)
	}
	if out := ev.output(active.RunID); len(out) != 1 || out[0] != "job=tethered fd=none test=runner" {
		t.Errorf("output %q, want the job's environment as without a guard", out)
	}
	if g := guardsOf(active.RunID); len(g) > 0 {
		t.Errorf("guard %v still alive after the run", g)
	}
}

// A lost Tethered lease had MinLifeLeft (400 ms) left: a run that ignores
// SIGTERM is ended within it, SIGKILL after 200 ms, not after its 10 s
// kill_grace.
func TestLockLostTetheredEndsWithinTheLeasesLife(t *testing.T) {
	s, ev, tl := newTetheredSupervisor(t)
	j := shJob("lost", `trap '' TERM; echo up; sleep 30`)
	j.KillGrace = 10 * time.Second
	j.OnLockLost = config.LockLostEnd
	done := fireAsync(s, j, slotAt(0))
	active := waitRunning(t, s, ev, "lost")
	testlog.Eventually(t, 5*time.Second, "the job's trap set", func() bool { return len(ev.output(active.RunID)) > 0 })
	close(tl.lost)
	lost := time.Now()
	f := recv(t, done)
	took := time.Since(lost)
	t.Logf("ended %v after the lease was lost", took.Round(time.Millisecond))
	if f.Outcome != run.Interrupted || f.Reason != "lock lost" {
		t.Errorf("outcome %s %q, want interrupted with \"lock lost\"", f.Outcome, f.Reason)
	}
	if took < 150*time.Millisecond || took > 2*time.Second { // 200 ms, generously on a loaded machine
		t.Errorf("the run took %v to end after its lease was lost, want within about 400 ms", took)
	}
}
