package proc

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/harness/testlog"
	"cronvisor/internal/proc/cgroup"
)

// blindRun is a run started as Run starts one (its own process group,
// its tag, straight into its leaf if it has one) whose keeper is told
// nothing: its supervisor died between the exec and the "pid N" message.
type blindRun struct {
	cmd     *exec.Cmd
	started time.Time
	tag     string
	leaf    string // "" without one
	reaped  chan struct{}
}

func startBlind(t *testing.T, script string, inLeaf bool) *blindRun {
	t.Helper()
	b := &blindRun{tag: fmt.Sprintf("CRONVISOR_RUN_ID=test-%d-%d", os.Getpid(), runSeq.Add(1)), reaped: make(chan struct{})}
	b.cmd = exec.Command("/bin/sh", "-c", script)
	b.cmd.Env = append(os.Environ(), sessionTag, b.tag)
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if inLeaf {
		l, err := hierarchy(t).Create(leafName(b.tag), cgroup.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Remove() })
		l.SysProcAttr(b.cmd.SysProcAttr)
		b.leaf = l.Path
	}
	b.started = time.Now()
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = unix.Kill(-b.cmd.Process.Pid, unix.SIGKILL)
		for _, pid := range tagged(b.tag) {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		<-b.reaped
	})
	go func() { _ = b.cmd.Wait(); close(b.reaped) }()
	return b
}

// keeper is the run's keeper after the tether's end with nothing said on
// it; deadline zero: no timeout.
func (b *blindRun) keeper(t *testing.T, deadline time.Time) *kept {
	t.Helper()
	tie, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(tie[0]) // the supervisor's death
	var out [2]int
	for i := range out {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		if out[i], err = dupCloexec(r.Fd()); err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	f := keeperFlags{tag: b.tag, cgroup: b.leaf, grace: time.Second, deadline: deadline, timeout: time.Until(deadline).Round(time.Second)}
	return newKept(f, &tether{fd: tie[1]}, keptFiles{stdout: out[0], stderr: out[1], lock: -1, session: -1, beats: -1})
}

// guardWithin is the keeper's End, which must come within d.
func guardWithin(t *testing.T, k *kept, d time.Duration) End {
	t.Helper()
	done := make(chan End, 1)
	go func() {
		defer k.close()
		k.followTether()
		end, _ := k.guard()
		done <- end
	}()
	select {
	case end := <-done:
		return end
	case <-time.After(d):
		t.Fatalf("the keeper of a run it was not told of gave no end within %v", d)
		return End{}
	}
}

// TestKeeperFindsTheRunItWasNotTold: a keeper whose supervisor died
// before it said the run's pid finds the run's main process itself, in
// its leaf or by its tag, and sees it to its real end and exit status;
// what it cannot see is recorded as unknown, never as a timeout, and a
// run without a deadline is let go of as soon as nothing of it is left.
func TestKeeperFindsTheRunItWasNotTold(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
		reaped bool // the main process is gone before the keeper looks
		noTime bool // timeout: none
		want   Outcome
		code   int
		reason string
		found  bool // the End names the main process
	}{
		{name: "exits by itself", script: "sleep 0.3; exit 3", want: Exited, code: 3, found: true},
		{name: "no timeout", script: "sleep 0.3; exit 0", noTime: true, want: Exited, code: 0, found: true},
		{name: "killed by a signal", script: "sleep 0.3; kill -KILL $$", want: Exited, code: 137, reason: "ended by signal SIGKILL", found: true},
		{name: "a descendant leads a group of its own", script: "setsid sleep 0.4 & sleep 0.3; exit 5", want: Exited, code: 5, found: true},
		{name: "over before the keeper looked", script: "exit 0", reaped: true, noTime: true, want: Canceled, code: -1,
			reason: "whether it ran is unknown"},
		{name: "main gone, its group left", script: "sleep 0.6 & exit 0", reaped: true, noTime: true, want: Canceled, code: -1,
			reason: "exit status unknown"},
		{name: "main gone, a descendant in a session of its own", script: "setsid sleep 0.6 & exit 0", reaped: true, noTime: true,
			want: Canceled, code: -1, reason: "exit status unknown"},
	}
	for _, tt := range tests {
		for _, inLeaf := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, leaf %t", tt.name, inLeaf), func(t *testing.T) {
				t.Parallel()
				b := startBlind(t, tt.script, inLeaf)
				if tt.reaped {
					<-b.reaped
				}
				deadline := time.Now().Add(20 * time.Second)
				if tt.noTime {
					deadline = time.Time{}
				}
				end := guardWithin(t, b.keeper(t, deadline), 5*time.Second)
				if end.Outcome != tt.want || end.ExitCode != tt.code || !strings.Contains(end.Reason, tt.reason) {
					t.Errorf("end %s, exit %d (%q); want %s, exit %d (%q)", end.Outcome, end.ExitCode, end.Reason, tt.want, tt.code, tt.reason)
				}
				if !tt.found {
					if end.Run.PID != 0 || !end.Run.Started.IsZero() {
						t.Errorf("end names pid %d started %v for a run it did not find", end.Run.PID, end.Run.Started)
					}
					return
				}
				if off := end.Run.Started.Sub(b.started).Abs(); end.Run.PID != b.cmd.Process.Pid || off > 100*time.Millisecond {
					t.Errorf("end names pid %d started %v; want %d started %v", end.Run.PID, end.Run.Started, b.cmd.Process.Pid, b.started)
				}
			})
		}
	}
}

// TestKeeperNoticesAnUnwatchedEnd: a run whose main process the keeper
// could not find (it exited first) but whose other processes go on is
// over, for its keeper, as soon as the last of them exits: its lock is
// not held past that, even without a deadline.
func TestKeeperNoticesAnUnwatchedEnd(t *testing.T) {
	t.Parallel()
	for _, inLeaf := range []bool{false, true} {
		t.Run(fmt.Sprintf("leaf %t", inLeaf), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			b := startBlind(t, "(sleep 0.8; touch "+dir+"/ended) & exit 0", inLeaf)
			<-b.reaped
			end := guardWithin(t, b.keeper(t, time.Time{}), 5*time.Second)
			fi, err := os.Stat(dir + "/ended")
			if err != nil {
				t.Fatalf("the keeper ended the run (%s, %q) before its last process did", end.Outcome, end.Reason)
			}
			if late := end.Ended.Sub(fi.ModTime()); late > time.Second {
				t.Errorf("the run's end was noticed %v after its last process ended, want within 1 s", late)
			}
			if end.Outcome != Canceled || !strings.Contains(end.Reason, "exit status unknown") {
				t.Errorf("end %s (%q), want the exit status unknown", end.Outcome, end.Reason)
			}
		})
	}
}

// TestKeeperReadsAZombieMainFromItsLeaf: a run's main process that
// exited before its keeper looked, and that nobody reaped yet (a dead
// supervisor's orphan, left to an init that does not reap at once), is
// no longer in its leaf's cgroup.procs; the keeper still finds it, by
// the cgroup its /proc entry names, and reads its exit status.
func TestKeeperReadsAZombieMainFromItsLeaf(t *testing.T) {
	t.Parallel()
	b := &blindRun{tag: fmt.Sprintf("CRONVISOR_RUN_ID=test-%d-%d", os.Getpid(), runSeq.Add(1))}
	l, err := hierarchy(t).Create(leafName(b.tag), cgroup.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Remove() })
	b.leaf = l.Path
	cmd := exec.Command("/bin/sh", "-c", "exit 4")
	cmd.Env = append(os.Environ(), sessionTag, b.tag)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	l.SysProcAttr(cmd.SysProcAttr)
	// Registered, so that no reaper of this test binary collects it: it
	// stays a zombie until the Wait below.
	if err := startRegistered(cmd); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer unregister(pid)
	defer func() { _ = cmd.Wait() }()
	if !testlog.Poll(5*time.Second, func() bool { st, err := procfs.ReadStat(pid); return err == nil && st.State == 'Z' }) {
		t.Fatalf("the main process %d did not exit", pid)
	}
	end := guardWithin(t, b.keeper(t, time.Time{}), 5*time.Second)
	if end.Outcome != Exited || end.ExitCode != 4 || end.Run.PID != pid || end.Run.Started.IsZero() {
		t.Errorf("end %s, exit %d, pid %d started %v (%q); want exited, exit 4, pid %d with its start",
			end.Outcome, end.ExitCode, end.Run.PID, end.Run.Started, end.Reason, pid)
	}
}
